import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CoverageGap, Observation, SurfaceEntry } from '../../../src/models/observation.js';
import type { AcquisitionStatus, MatchKind } from '../../../src/models/vocabulary.js';
import { nodeSurfaceFs, type SurfaceFs } from '../../../src/sources/confined-fs/surface-fs.js';
import { type AcquireResult, acquireSync } from '../../../src/sources/local-file/acquire-sync.js';
import { DEFAULT_LIMITS, type SourceLimits } from '../../../src/sources/local-file/limits.js';

/**
 * Fresh temp workspaces for source tests. Every file gets the same modification time, so expected
 * observations can be written out in full.
 */

export const MTIME = new Date('2025-01-01T00:00:00.000Z');

export type TreeNode =
  | string
  | Buffer
  | { dir: Tree }
  | { symlink: string }
  | { fifo: true }
  | { hardlink: string };
export interface Tree {
  [name: string]: TreeNode;
}

/** A new empty directory under the system temp dir, traversable by every user (for uid 65534 children). */
export function tempDir(prefix = 'witness-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.chmodSync(dir, 0o755);
  return dir;
}

/**
 * Removes a temp tree: fs.rmSync, and `rm -rf` for a tree deeper than PATH_MAX (ENAMETOOLONG), which
 * fs.rmSync cannot remove. Not `rm -rf` every time: a process started from a test process costs it tens of
 * milliseconds of CPU, and the source tests remove hundreds of trees.
 */
export function removeDir(dir: string): void {
  try {
    fs.rmSync(dir, { recursive: true, force: true });
    return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENAMETOOLONG') throw error;
  }
  const result = spawnSync('rm', ['-rf', '--', dir], { stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`rm -rf ${dir} failed`);
}

/** Creates `tree` under `root` (which must exist). Hard links name a path relative to `root`. */
export function buildTree(root: string, tree: Tree): void {
  const links: [string, string][] = [];
  const walk = (dir: string, nodes: Tree) => {
    for (const [name, node] of Object.entries(nodes)) {
      const at = path.join(dir, name);
      if (typeof node === 'string' || Buffer.isBuffer(node)) {
        fs.writeFileSync(at, node);
        fs.utimesSync(at, MTIME, MTIME);
      } else if ('dir' in node) {
        fs.mkdirSync(at);
        walk(at, node.dir);
      } else if ('symlink' in node) {
        fs.symlinkSync(node.symlink, at);
      } else if ('fifo' in node) {
        mkfifo(at);
      } else {
        links.push([path.join(root, node.hardlink), at]);
      }
    }
  };
  walk(root, tree);
  for (const [existing, at] of links) fs.linkSync(existing, at);
}

export function mkfifo(at: string): void {
  const result = spawnSync('mkfifo', [at], { stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`mkfifo ${at} failed`);
}

/**
 * The tree the two-reader suites walk, under `base/ws` (returned): 12 directories of 40 text files of
 * growing size, and in four of them the entries a walk settles itself, spread through the enumeration
 * order among files the readers read (or cut): a FIFO, a link out of the root (to `base/outside.txt`), a
 * dangling link, and an absolute link to a file inside. That last one is refused by openat2 (EXDEV) and
 * opened again through its parent's handle (the procfs path), so whichever thread reads it, its entry must
 * be the same (a design that lets the second reader open candidates must keep that parent handle open
 * until then).
 */
export function buildReaderSplitTree(base: string): string {
  const root = path.join(base, 'ws');
  fs.mkdirSync(root);
  fs.writeFileSync(path.join(base, 'outside.txt'), 'OUTSIDE');
  const tree: Record<string, { dir: Record<string, string> }> = {};
  for (let d = 0; d < 12; d++) {
    const files: Record<string, string> = {};
    for (let f = 0; f < 40; f++) files[`f${String(f).padStart(2, '0')}.txt`] = `${d}/${f} `.repeat(f + 1);
    tree[`d${String(d).padStart(2, '0')}`] = { dir: files };
  }
  buildTree(root, tree);
  for (const d of ['d01', 'd04', 'd07', 'd10']) {
    mkfifo(path.join(root, d, 'f10.fifo'));
    fs.symlinkSync(path.join(base, 'outside.txt'), path.join(root, d, 'f20.out'));
    fs.symlinkSync('nowhere', path.join(root, d, 'f30.dangling'));
    fs.symlinkSync(path.join(root, 'd00', 'f05.txt'), path.join(root, d, 'f25.abs'));
  }
  return root;
}

export function sha256Hex(bytes: string | Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** The entry a complete read of a text file written by {@link buildTree} yields. */
export function textEntry(uri: string, text: string, via?: string): SurfaceEntry {
  return {
    uri,
    sizeBytes: Buffer.byteLength(text),
    sha256: sha256Hex(text),
    modifiedAt: MTIME.toISOString(),
    content: text,
    contentTruncated: false,
    ...(via === undefined ? {} : { via }),
  };
}

export interface Evidence {
  acquisition: AcquisitionStatus;
  entries: SurfaceEntry[];
  gaps: CoverageGap[];
}

/** The evidence part of an observation, after checking the parts that are derived from it. */
export function evidenceOf(observation: Observation): Evidence {
  const { coverage } = observation.payload;
  if (coverage.complete !== (observation.acquisition === 'complete')) {
    throw new Error('coverage.complete disagrees with the acquisition status');
  }
  const reasons = [...new Set(coverage.gaps.map((gap) => gap.reason))];
  if (JSON.stringify(reasons) !== JSON.stringify(coverage.reasons)) {
    throw new Error('coverage.reasons is not the unique gap reasons in order');
  }
  return { acquisition: observation.acquisition, entries: observation.payload.entries, gaps: coverage.gaps };
}

/** Runs one acquisition in-process through `surfaceFs` (the seam), as the worker would. */
export function acquireDirect(
  root: string,
  uri: string,
  match: MatchKind,
  limits: Partial<SourceLimits> = {},
  surfaceFs: SurfaceFs = nodeSurfaceFs,
  cancelled: () => boolean = () => false,
): AcquireResult {
  const outcome = acquireSync(
    { root, uri, match, limits: { ...DEFAULT_LIMITS, ...limits } },
    surfaceFs,
    cancelled,
  );
  if (outcome.kind !== 'done') throw new Error('acquisition was cancelled');
  return outcome.result;
}

/**
 * Number of file descriptors this process holds open right now, not counting the `/proc/<pid>/fd`
 * directory handle the openat2 seam keeps for the life of each thread that uses it (one per thread,
 * opened the first time the thread builds the seam, so a thread started mid-test would add one).
 */
export function openFdCount(): number {
  const procFds = fs.realpathSync('/proc/self/fd');
  let count = 0;
  for (const name of fs.readdirSync('/proc/self/fd')) {
    try {
      if (fs.readlinkSync(`/proc/self/fd/${name}`) === procFds) continue;
    } catch {
      // Closed meanwhile (the readdir's own handle): not open now.
      continue;
    }
    count++;
  }
  return count;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The whole observation a LocalFileSurfaceSource must return for `uri` under `root`, with the fields that
 * vary by run (id, observedAt, durationMs) taken from `actual` once their format is checked.
 */
export function expectedObservation(
  actual: Observation,
  expected: {
    root: string;
    uri: string;
    match: MatchKind;
    acquisition: AcquisitionStatus;
    entries?: SurfaceEntry[];
    gaps?: CoverageGap[];
    resolvedRoot?: string;
    limits?: Partial<SourceLimits>;
    stats?: Record<string, number>;
  },
): Observation {
  if (!UUID.test(actual.id)) throw new Error(`observation id ${actual.id} is not a UUID`);
  if (Number.isNaN(Date.parse(actual.observedAt))) throw new Error('observedAt is not a time');
  const durationMs = actual.metadata.durationMs;
  if (typeof durationMs !== 'number' || durationMs < 0) throw new Error('durationMs is not a duration');
  const scope = { scorableType: 'surface' as const, uri: expected.uri, match: expected.match };
  const gaps = expected.gaps ?? [];
  const metadata: Observation['metadata'] =
    expected.acquisition === 'unavailable'
      ? { durationMs, stats: zeroStats(), ...surfaceFsOf(actual) }
      : {
          resolvedRoot: expected.resolvedRoot ?? fs.realpathSync(expected.root),
          durationMs,
          stats: expected.stats ?? (actual.metadata.stats as Record<string, number>),
          ...surfaceFsOf(actual),
        };
  return {
    id: actual.id,
    sourceIdentifier: {
      type: 'LocalFileSurfaceSource',
      version: '1',
      params: { root: path.resolve(expected.root), ...DEFAULT_LIMITS, ...expected.limits },
    },
    acquisition: expected.acquisition,
    observedAt: actual.observedAt,
    scorable: scope,
    payload: {
      kind: 'surface',
      schemaVersion: 1,
      scope,
      entries: expected.entries ?? [],
      coverage: {
        complete: expected.acquisition === 'complete',
        reasons: [...new Set(gaps.map((gap) => gap.reason))],
        gaps,
      },
    },
    metadata,
  };
}

function zeroStats(): Record<string, number> {
  return { directoriesListed: 0, entriesExamined: 0, candidates: 0, filesRead: 0, bytesRead: 0 };
}

/** The implementation the source reports having used, checked against the closed list. */
function surfaceFsOf(actual: Observation): { surfaceFs?: string } {
  const used = actual.metadata.surfaceFs;
  if (used === undefined) return {};
  if (used !== 'openat2' && used !== 'procfs') throw new Error(`metadata.surfaceFs is ${String(used)}`);
  return { surfaceFs: used };
}
