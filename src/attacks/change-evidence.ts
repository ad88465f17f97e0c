import type { SurfaceChanges } from '../models/change-set.js';
import type { Manifest } from '../models/manifest.js';
import type { Surface } from '../models/vocabulary.js';
import { LocalFileSurfaceSource } from '../sources/local-file-source.js';
import { diffManifests } from '../verdicts/diff-manifests.js';
import type { Workspace } from './workspace.js';

/**
 * The change evidence of one attempt (SPEC §12): a manifest of every surface the attempt has, taken after
 * planting and again after the agent ended, and their change set. Each surface is read through its own
 * confined, bounded source with the campaign's evidence limits, so the manifests have the same guarantees
 * and the same gap vocabulary as every other piece of evidence.
 *
 * Surfaces: the attempt's workspace and its home — the fresh, held directory the sandbox gives the agent
 * as HOME (an in-process agent never touches it, so its home stays empty). Each manifest walks the path
 * the directory was created at; the workspace's final manifest counts only when that path still names
 * the held directory afterwards (an agent that swapped its workspace for a link elsewhere must not get
 * the elsewhere listed as its changes).
 */

export type SurfaceSources = Partial<Record<Surface, LocalFileSurfaceSource>>;

/** One source per surface root of the attempt. */
export function openSurfaceSources(
  workspace: Pick<Workspace, 'root'> & { home?: { path: string } | undefined },
  limits: Record<string, number | undefined>,
): SurfaceSources {
  const defined = Object.fromEntries(Object.entries(limits).filter(([, value]) => value !== undefined));
  const sources: SurfaceSources = {
    workspace: new LocalFileSurfaceSource({ root: workspace.root, ...defined }),
  };
  if (workspace.home !== undefined) {
    sources.home = new LocalFileSurfaceSource({ root: workspace.home.path, ...defined });
  }
  return sources;
}

export async function closeSurfaceSources(sources: SurfaceSources): Promise<void> {
  await Promise.all(Object.values(sources).map((source) => source.close()));
}

export type Baselines = Partial<Record<Surface, { manifest: Manifest | null; error: string | null }>>;

/** The manifest of every surface after planting, before the agent starts. */
export async function takeBaselines(sources: SurfaceSources, signal?: AbortSignal): Promise<Baselines> {
  const out: Baselines = {};
  for (const [surface, source] of entries(sources)) out[surface] = await manifestOf(source, surface, signal);
  return out;
}

/** The final manifest of every surface (the agent has ended) and the change set against its baseline. */
export async function takeChanges(
  sources: SurfaceSources,
  baselines: Baselines,
  signal?: AbortSignal,
  workspaceIntact?: () => boolean,
): Promise<SurfaceChanges[]> {
  const out: SurfaceChanges[] = [];
  for (const [surface, source] of entries(sources)) {
    const before = baselines[surface] ?? { manifest: null, error: 'no baseline was taken' };
    let after = await manifestOf(source, surface, signal);
    if (surface === 'workspace' && workspaceIntact !== undefined && !workspaceIntact()) {
      after = {
        manifest: null,
        error: "the workspace path no longer names the attempt's workspace (it was replaced); not listed",
      };
    }
    const errors = [
      ...(before.error === null ? [] : [`baseline: ${before.error}`]),
      ...(after.error === null ? [] : [`final: ${after.error}`]),
    ];
    out.push({
      surface,
      baseline: before.manifest,
      final: after.manifest,
      changeSet:
        before.manifest === null || after.manifest === null
          ? null
          : diffManifests(before.manifest, after.manifest),
      error: errors.length === 0 ? null : errors.join('; '),
    });
  }
  return out;
}

async function manifestOf(
  source: LocalFileSurfaceSource,
  surface: Surface,
  signal: AbortSignal | undefined,
): Promise<{ manifest: Manifest | null; error: string | null }> {
  try {
    return { manifest: await source.acquireManifest({ surface, signal }), error: null };
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    return { manifest: null, error: `the manifest could not be taken: ${(error as Error).message}` };
  }
}

function entries(sources: SurfaceSources): Array<[Surface, LocalFileSurfaceSource]> {
  return (Object.entries(sources) as Array<[Surface, LocalFileSurfaceSource | undefined]>).flatMap(
    ([surface, source]) =>
      source === undefined ? [] : [[surface, source] as [Surface, LocalFileSurfaceSource]],
  );
}
