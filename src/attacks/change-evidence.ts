import { setTimeout as sleep } from 'node:timers/promises';
import type { SurfaceChanges } from '../models/change-set.js';
import { type Condition, isFileCondition } from '../models/condition.js';
import { checkManifest, type Manifest } from '../models/manifest.js';
import { type CoverageGap, uniqueReasons } from '../models/observation.js';
import type { Surface } from '../models/vocabulary.js';
import { type ClockMark, markFileSystemClock } from '../sources/file-system-clock.js';
import { type DigestBaseline, LocalFileSurfaceSource } from '../sources/local-file-source.js';
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
 *
 * The final manifests reuse the baseline's digest of every file provably untouched since the baselines
 * were complete (same stat key, ctime older than that moment: local-file/baseline-digests.ts), and read
 * every other file; each final manifest's metadata counts the digests carried (`stats.digestsCarried`)
 * and says how the files were decided (`carryOver`), so replay sees the shortcut.
 */

export type SurfaceSources = Partial<Record<Surface, LocalFileSurfaceSource>>;

/**
 * Per surface, the exact uris its manifests look up on their own beside the walk (SPEC §13): those of the
 * exact file conditions the attempt is judged by, so a budget the walk ran out of elsewhere (1,100 empty
 * files) or a link git follows (`.git -> real-git`) cannot leave them undetermined.
 */
export type SurfaceLookups = Partial<Record<Surface, readonly string[]>>;

/** The lookups the exact file conditions among `conditions` call for (others need none). */
export function lookupsFor(conditions: readonly Condition[]): SurfaceLookups {
  const out: Partial<Record<Surface, string[]>> = {};
  for (const condition of conditions) {
    if (!isFileCondition(condition) || condition.match !== 'exact') continue;
    const surface = condition.surface ?? 'workspace';
    const uris = out[surface] ?? [];
    uris.push(condition.uri);
    out[surface] = uris;
  }
  return out;
}

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

export type Baselines = Partial<Record<Surface, { manifest: Manifest | null; error: string | null }>> & {
  /**
   * The file system's clock once every baseline was complete (file-system-clock.ts), when it could be
   * read: the final manifests reuse the digests of files provably untouched since.
   */
  clean?: ClockMark;
};

/**
 * The manifest of every surface after planting, before the agent starts. With `clockDirectory` (a
 * directory only Witness writes, on the surfaces' file system: the run directory), the moment the
 * baselines were complete is then read from the file system's clock, so the final manifests need not
 * re-read files that provably did not change (digest reuse); without it, or when the directory
 * cannot be written, every file is read again.
 */
export async function takeBaselines(
  sources: SurfaceSources,
  signal?: AbortSignal,
  clockDirectory?: string,
  lookups: SurfaceLookups = {},
): Promise<Baselines> {
  const out: Baselines = {};
  for (const [surface, source] of entries(sources)) {
    out[surface] = await manifestOf(source, surface, signal, undefined, lookups[surface]);
  }
  if (clockDirectory !== undefined) {
    try {
      out.clean = markFileSystemClock(clockDirectory);
    } catch {
      // No mark, no digest reuse: the final manifests read every file, which proves the same.
    }
  }
  return out;
}

export interface ChangeOptions {
  /** Per surface, glob locators of the agent CLI's own state (its preset's caches, sessions, logs). */
  agentState?: Partial<Record<Surface, readonly string[]>> | undefined;
  /**
   * `sandbox: none` (250 ms): each final manifest is taken twice, this far apart; an entry that differs
   * between the two is unsettled (a process that escaped the kill may still be writing), and its change
   * is left undecided.
   */
  settleMs?: number | undefined;
}

/** The final manifest of every surface (the agent has ended) and the change set against its baseline. */
export async function takeChanges(
  sources: SurfaceSources,
  baselines: Baselines,
  signal?: AbortSignal,
  workspaceIntact?: () => boolean,
  lookups: SurfaceLookups = {},
  options: ChangeOptions = {},
): Promise<SurfaceChanges[]> {
  const out: SurfaceChanges[] = [];
  for (const [surface, source] of entries(sources)) {
    const before = baselines[surface] ?? { manifest: null, error: 'no baseline was taken' };
    const reuseDigestsFrom =
      before.manifest !== null && baselines.clean !== undefined
        ? { baseline: before.manifest, mark: baselines.clean }
        : undefined;
    let after = await manifestOf(source, surface, signal, reuseDigestsFrom, lookups[surface]);
    if (options.settleMs !== undefined && after.manifest !== null) {
      await sleep(options.settleMs, undefined, { signal });
      const again = await manifestOf(source, surface, signal, reuseDigestsFrom, lookups[surface]);
      after =
        again.manifest === null
          ? again
          : { manifest: settledManifest(after.manifest, again.manifest, options.settleMs), error: null };
    }
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
          : diffManifests(before.manifest, after.manifest, {
              agentStatePaths: options.agentState?.[surface],
            }),
      error: errors.length === 0 ? null : errors.join('; '),
    });
  }
  return out;
}

async function manifestOf(
  source: LocalFileSurfaceSource,
  surface: Surface,
  signal: AbortSignal | undefined,
  reuseDigestsFrom?: DigestBaseline,
  lookups?: readonly string[],
): Promise<{ manifest: Manifest | null; error: string | null }> {
  try {
    const options = {
      surface,
      signal,
      ...(reuseDigestsFrom === undefined ? {} : { reuseDigestsFrom }),
      ...(lookups === undefined || lookups.length === 0 ? {} : { lookups }),
    };
    return { manifest: await source.acquireManifest(options), error: null };
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

/** Most entries named one by one as unsettled; beyond, one gap covers the whole surface. */
const MAX_UNSETTLED_GAPS = 100;

/**
 * The second of two final readings, with a `workspace_unsettled` gap at each entry that differs between
 * them (SPEC §13: without a sandbox a process that escaped the kill may still be writing). The change set
 * leaves those entries undecided (`diffManifests`), so no condition on them is decided by a reading that
 * was still moving — a file created, modified or deleted between the two readings proves nothing.
 */
export function settledManifest(first: Manifest, second: Manifest, settleMs: number): Manifest {
  const key = (entry: Manifest['entries'][number]) => JSON.stringify(entry);
  const before = new Map(first.entries.map((entry) => [entry.uri, key(entry)]));
  const after = new Map(second.entries.map((entry) => [entry.uri, key(entry)]));
  const moved = [...new Set([...before.keys(), ...after.keys()])]
    .filter((uri) => before.get(uri) !== after.get(uri))
    .sort();
  const coverageMoved = JSON.stringify(first.coverage) !== JSON.stringify(second.coverage);
  if (moved.length === 0 && !coverageMoved && first.acquisition === second.acquisition) return second;
  const apart = `between two readings ${settleMs} ms apart`;
  const gaps: CoverageGap[] =
    moved.length === 0 || moved.length > MAX_UNSETTLED_GAPS
      ? [
          {
            reason: 'workspace_unsettled',
            detail: `${moved.length} entries or the coverage changed ${apart}`,
          },
        ]
      : moved.map((uri) => ({ reason: 'workspace_unsettled', uri, detail: `changed ${apart}` }));
  const all = [...second.coverage.gaps, ...gaps];
  return checkManifest({
    ...second,
    acquisition: second.acquisition === 'complete' ? 'partial' : second.acquisition,
    coverage: { complete: false, reasons: uniqueReasons(all), gaps: all },
  });
}
