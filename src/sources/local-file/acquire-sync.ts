import { type ParsedLocator, parseLocator } from '../../models/locator.js';
import type { ManifestEntry } from '../../models/manifest.js';
import type { CoverageGap, SurfaceEntry } from '../../models/observation.js';
import type { AcquisitionStatus, MatchKind } from '../../models/vocabulary.js';
import { cancellableFs } from '../confined-fs/cancellable-fs.js';
import { errorCode, OperationCancelled, rethrowCancelled } from '../confined-fs/fs-errors.js';
import type { MountedIdentity } from '../confined-fs/mount-identity.js';
import type { SurfaceFs } from '../confined-fs/surface-fs.js';
import { AcquisitionState, type AcquisitionStats } from './acquisition-state.js';
import { type BaselineDigests, type DigestReuseCounts, ManifestRecorder } from './baseline-digests.js';
import { lookUpExact } from './exact-lookup.js';
import { walkExact } from './exact-walk.js';
import { walkGlob } from './glob-walk.js';
import type { SourceLimits } from './limits.js';
import { ManifestReadLanes } from './manifest-reads.js';
import type { PackedSurfaceEntries } from './packed-entries.js';
import { type HelperLink, localLanes, sharedLanes } from './read-lanes.js';
import { scratchChunk } from './reserved-read.js';

/**
 * One acquisition, synchronously, on the calling thread (the source runs it in a worker). Everything the
 * workspace holds is treated as hostile: the root is opened once as a handle (the kernel resolving its
 * path in that one lookup), and every other object is reached relative to a handle (see surface-fs.ts
 * and confined-read.ts).
 */

export interface AcquireRequest {
  root: string;
  uri: string;
  match: MatchKind;
  limits: SourceLimits;
  /**
   * `manifest`: list every entry under the root (uri must be `/**`, glob) instead of reading matches.
   * `lookup`: the manifest entry of one exact uri alone, links beneath the root followed (exact-lookup.ts).
   */
  mode?: 'observation' | 'manifest' | 'lookup';
  /** In manifest mode: the baseline digests a file may keep when it provably did not change. */
  reuse?: BaselineDigests;
}

export interface AcquireResult {
  acquisition: AcquisitionStatus;
  /** Sorted by uri; with an entry sink, only the entries not already submitted to it. */
  entries: SurfaceEntry[];
  gaps: CoverageGap[];
  stats: AcquisitionStats;
  /** The resolved root as the kernel reports it (absent when the root is unavailable). */
  rootPath?: string;
  /**
   * In manifest mode: every entry found, sorted by uri (`entries` is then empty) — except, with a reuse
   * request, the files provably unchanged since the baseline, listed in `reused` instead. With an entry
   * sink: only the entries not already submitted to it, in walk order; see `manifestOrder`.
   */
  manifest?: ManifestEntry[];
  /**
   * With an entry sink, in manifest mode: walk positions (the posted entries in the order they were
   * posted, then `manifest`) in uri order.
   */
  manifestOrder?: Int32Array;
  /** With a reuse request: baseline indices of the reused files, ascending (baseline-digests.ts). */
  reused?: Int32Array;
  /** In manifest mode: the stat key of each entry of the whole manifest (`manifest` merged with `reused`). */
  statKeys?: Float64Array;
  /** In manifest mode with a reuse request: how the files were decided. */
  reuseCounts?: DigestReuseCounts;
  /** Batches of files the second reader thread read (absent without one). Not part of the evidence. */
  helperBatches?: number;
  /** Names the second reader statted for a reusing manifest (stat-ahead.ts). Not evidence. */
  helperStats?: number;
}

export type AcquireOutcome = { kind: 'done'; result: AcquireResult } | { kind: 'cancelled' };

export interface AcquireSyncOptions {
  /**
   * A glob observation's entries, in packed batches (packed-entries.ts) in the order they were read,
   * while the walk runs, the last one before this returns; the result then holds none, and the receiver
   * sorts the union by uri. Without it (or for an exact locator) the result holds every entry.
   */
  onEntries?: (batch: PackedSurfaceEntries) => void;
  /**
   * A manifest's entries in batches while the walk runs (the result then gives their order); without it
   * the result holds every entry.
   */
  onManifestEntries?: (batch: ManifestEntry[]) => void;
  /**
   * A second reader thread for this acquisition (read-lanes.ts), used by glob locators only (observations
   * and manifests: manifest-reads.ts): an exact locator reads one file.
   */
  helper?: HelperLink;
}

export function acquireSync(
  request: AcquireRequest,
  fs: SurfaceFs,
  cancelled: () => boolean,
  options: AcquireSyncOptions = {},
): AcquireOutcome {
  const locator = parseLocator(request.uri, request.match);
  if (cancelled()) return { kind: 'cancelled' };
  try {
    return acquireGuarded(request, locator, cancellableFs(fs, cancelled), cancelled, options);
  } catch (error) {
    if (error instanceof OperationCancelled) return { kind: 'cancelled' };
    throw error;
  }
}

function acquireGuarded(
  request: AcquireRequest,
  locator: ParsedLocator,
  fs: SurfaceFs,
  cancelled: () => boolean,
  options: AcquireSyncOptions,
): AcquireOutcome {
  const emptyStats: AcquisitionStats = {
    directoriesListed: 0,
    entriesExamined: 0,
    candidates: 0,
    filesRead: 0,
    bytesRead: 0,
  };
  // The root is opened by the path the caller gave, and the kernel resolves its symlinks in that one
  // lookup; the handle's kernel path (read below, as every acquisition always has) is the resolved root.
  // This replaced `realpath` then an O_NOFOLLOW open of its answer: the same directory, the same errors
  // (ENOENT, ENOTDIR, EACCES, ELOOP), without the window in which the answer could be swapped before the
  // open, and three to four system calls fewer per acquisition.
  let rootFd: number;
  try {
    rootFd = fs.openRoot(request.root);
  } catch (error) {
    rethrowCancelled(error);
    const code = errorCode(error);
    const detail = code === 'ENOTDIR' ? 'the root is not a directory' : `the root cannot be opened (${code})`;
    return {
      kind: 'done',
      result: {
        acquisition: 'unavailable',
        entries: [],
        gaps: [{ reason: 'surface_root_unavailable', uri: '/', detail }],
        stats: emptyStats,
      },
    };
  }
  try {
    let rootPath: Buffer;
    try {
      // Internal: caught just below, where it becomes a confinement_unverified gap.
      if (!fs.procIsTrusted()) throw new Error('/proc is not procfs');
      rootPath = fs.handlePath(rootFd);
      // Every placement compares a handle's kernel path with this one, and places only paths under '/'.
      // A kernel path not under '/' (the kernel's name for an object with no path) could place nothing,
      // so nothing is claimed about such a root. A root in another mount namespace is still named under
      // '/'; rootNamedHere below is what refuses it.
      // Internal (caught below).
      if (rootPath.length === 0 || rootPath[0] !== SLASH) throw new Error('no path under / for the root');
    } catch (error) {
      rethrowCancelled(error);
      const rootReal = realRootOrUndefined(fs, request.root);
      return {
        kind: 'done',
        result: {
          acquisition: 'partial',
          entries: [],
          gaps: [
            {
              reason: 'confinement_unverified',
              uri: request.uri,
              detail: 'no handle-path primitive (/proc/self/fd on procfs) is available to prove confinement',
            },
          ],
          stats: emptyStats,
          ...(rootReal === undefined ? {} : { rootPath: rootReal }),
        },
      };
    }
    const named = rootNamedHere(fs, rootFd, rootPath, request.uri);
    if (named !== undefined) return { kind: 'done', result: { ...named, entries: [], stats: emptyStats } };
    const state = new AcquisitionState(fs, request.limits, rootPath, rootFd, cancelled, scratchChunk());
    // A glob observation's entries leave packed, in batches; an exact locator's one entry stays in the
    // result (one message, not two: an exact acquisition's latency is mostly messages). A manifest's batches are manifest entries (ManifestRecorder
    // posts them).
    if (request.mode !== 'manifest' && locator.match === 'glob' && options.onEntries !== undefined) {
      state.packEntriesTo(options.onEntries);
    }
    let reads: ManifestReadLanes | undefined;
    if (request.mode === 'manifest' || request.mode === 'lookup') {
      if (request.mode === 'manifest' && (locator.match !== 'glob' || locator.uri !== '/**')) {
        throw new Error('a manifest walks /** (glob): a bug');
      }
      if (request.mode === 'lookup' && (locator.match !== 'exact' || request.reuse !== undefined)) {
        throw new Error('a lookup names one exact uri, and reuses nothing: a bug');
      }
      state.manifest = [];
      // A lookup's one entry stays in its result (no batches).
      const sink = request.mode === 'manifest' ? options.onManifestEntries : undefined;
      state.recorder = new ManifestRecorder(request.reuse, state.manifest, sink);
      reads = new ManifestReadLanes(state.recorder, () => state.checkCancelled());
      state.manifestReads = reads;
    }
    const reader = reads === undefined ? state.reader : reads.reader(state.reader);
    const lanes =
      options.helper !== undefined && locator.match === 'glob'
        ? sharedLanes(
            reader,
            options.helper,
            (seq, gap) => state.taskGap(seq, gap),
            () => state.checkCancelled(),
            reads === undefined ? undefined : (batch) => reads.onReads(batch),
          )
        : undefined;
    if (lanes !== undefined) state.lanes = lanes;
    else if (reads !== undefined) state.lanes = localLanes(reader);
    if (reads !== undefined) state.lanes = reads.lanes(state.lanes);
    let walked = false;
    let via: string | undefined;
    try {
      if (request.mode === 'lookup') via = lookUpExact(state, request.uri, locator.segments);
      else if (locator.match === 'exact') walkExact(state, request.uri, locator.segments);
      else walkGlob(state, locator);
      state.lanes.finish();
      state.flushEntries();
      walked = true;
    } finally {
      // Cancelled or failed: the handles still queued are closed unread, and the helper is told to stop.
      if (!walked) state.lanes.abandon();
    }
    const gaps = state.orderedGaps();
    const entries = state.entries.sort((a, b) => (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0));
    const manifest = state.recorder?.finish();
    // The lookup's entry, complete now, names the links it was reached through.
    const looked =
      via === undefined ? undefined : manifest?.manifest.find((entry) => entry.uri === request.uri);
    if (looked !== undefined) looked.via = via;
    return {
      kind: 'done',
      result: {
        acquisition: gaps.length === 0 ? 'complete' : 'partial',
        entries,
        gaps,
        stats: state.stats,
        rootPath: rootPath.toString('utf8'),
        ...(manifest === undefined
          ? {}
          : {
              manifest: manifest.manifest,
              statKeys: manifest.keys,
              reused: manifest.reused,
              ...(manifest.order === undefined ? {} : { manifestOrder: manifest.order }),
            }),
        ...(request.reuse === undefined || state.recorder === undefined
          ? {}
          : { reuseCounts: state.recorder.counts }),
        ...(lanes === undefined
          ? {}
          : { helperBatches: lanes.helperBatches, helperStats: lanes.helperStats }),
      },
    };
  } finally {
    fs.close(rootFd);
  }
}

const SLASH = 0x2f;

/**
 * Checks that the root handle's kernel path names, in this process, the very directory the handle holds,
 * on the very mount (device, inode and mount id equal, by statx or /proc/self/fdinfo of the path and of
 * the handle: mount-identity.ts); undefined when it does, else the answer to give.
 *
 * Every placement compares a handle's kernel path with the root's, and absolute symlinks inside the root
 * are resolved in this process's mount namespace. A root given as `/proc/<pid>/root/…` of a process in
 * another mount namespace is walked through that namespace's mounts, yet the kernel writes its path as
 * that namespace sees it, which here may name another directory, or the same directory with other mounts
 * below it (a container given the workspace at the same path). Attack it stops: a link in such a root to
 * a path below it that only this namespace mounts (or that differs here) is resolved here, starts with the
 * root's path string, and would be placed "inside" and read — a host file reported as the agent's
 * (`root-namespace.heavy.test.ts`: a different directory, and the same directory with a mount only here).
 * Equal mount ids prove the handle's mount is the one the path crosses here, so the walk and the links see
 * the same mounts. A root removed after it was opened (reached through a magic link: its path ends in
 * " (deleted)") names nothing: unavailable, as a missing root is, rather than an empty, complete walk.
 */
function rootNamedHere(
  fs: SurfaceFs,
  rootFd: number,
  rootPath: Buffer,
  uri: string,
): Pick<AcquireResult, 'acquisition' | 'gaps'> | undefined {
  let named: MountedIdentity;
  try {
    named = fs.mountedIdentityOfPath(rootPath);
  } catch (error) {
    rethrowCancelled(error);
    return {
      acquisition: 'unavailable',
      gaps: [
        {
          reason: 'surface_root_unavailable',
          uri: '/',
          detail: `the root's own path no longer names it (${errorCode(error)}): removed, or in another mount namespace`,
        },
      ],
    };
  }
  const held = fs.mountedIdentity(rootFd);
  if (named.dev === held.dev && named.ino === held.ino && named.mountId === held.mountId) return undefined;
  return {
    acquisition: 'partial',
    gaps: [
      {
        reason: 'confinement_unverified',
        uri,
        detail:
          "the root's own path names another directory or mount here (a root in another mount namespace): nothing can be placed inside it",
      },
    ],
  };
}

/**
 * The root's real path by name, for the `confinement_unverified` answer only (the handle's own path could
 * not be read); undefined when it cannot be resolved either (the root was removed since it was opened).
 */
function realRootOrUndefined(fs: SurfaceFs, root: string): string | undefined {
  try {
    return fs.resolveRoot(root);
  } catch (error) {
    rethrowCancelled(error);
    return undefined;
  }
}
