import { type ParsedLocator, parseLocator } from '../../models/locator.js';
import type { ManifestEntry } from '../../models/manifest.js';
import type { CoverageGap, SurfaceEntry } from '../../models/observation.js';
import type { AcquisitionStatus, MatchKind } from '../../models/vocabulary.js';
import {
  AcquisitionCancelled,
  AcquisitionState,
  type AcquisitionStats,
  errorCode,
  rethrowCancelled,
} from './acquisition-state.js';
import { cancellableFs } from './cancellable-fs.js';
import { type CarryCounts, type DigestCarryRequest, DigestCarryWalk } from './digest-carry.js';
import { walkExact } from './exact-walk.js';
import { walkGlob } from './glob-walk.js';
import type { SourceLimits } from './limits.js';
import { type HelperLink, sharedLanes } from './read-lanes.js';
import { scratchChunk } from './reserved-read.js';
import type { SurfaceFs } from './surface-fs.js';

/**
 * One acquisition, synchronously, on the calling thread (the source runs it in a worker). Everything the
 * workspace holds is treated as hostile: the root is resolved once, opened once as a handle, and every
 * other object is reached relative to a handle (see surface-fs.ts and confined-read.ts).
 */

export interface AcquireRequest {
  root: string;
  uri: string;
  match: MatchKind;
  limits: SourceLimits;
  /** `manifest`: list every entry under the root (uri must be `/**`, glob) instead of reading matches. */
  mode?: 'observation' | 'manifest';
  /** In manifest mode: the baseline digests a file may keep when it provably did not change. */
  carry?: DigestCarryRequest;
}

export interface AcquireResult {
  acquisition: AcquisitionStatus;
  /** Sorted by uri; with an entry sink, only the entries not already handed to it. */
  entries: SurfaceEntry[];
  gaps: CoverageGap[];
  stats: AcquisitionStats;
  /** The resolved root as the kernel reports it (absent when the root is unavailable). */
  rootPath?: string;
  /**
   * In manifest mode: every entry found, sorted by uri (`entries` is then empty) — except, with a carry
   * request, the files provably unchanged since the baseline, listed in `carried` instead. With an entry
   * sink: only the entries not already handed to it, in walk order; see `manifestOrder`.
   */
  manifest?: ManifestEntry[];
  /**
   * With an entry sink, in manifest mode: walk positions (the posted entries in the order they were
   * posted, then `manifest`) in uri order.
   */
  manifestOrder?: Int32Array;
  /** With a carry request: baseline indices of the carried files, ascending (digest-carry.ts). */
  carried?: Int32Array;
  /** In manifest mode: the stat key of each entry of the whole manifest (`manifest` merged with `carried`). */
  statKeys?: Float64Array;
  /** In manifest mode with a carry request: how the files were decided. */
  carryCounts?: CarryCounts;
  /** Batches of files the second reader thread read (absent without one). Not part of the evidence. */
  helperBatches?: number;
}

export type AcquireOutcome = { kind: 'done'; result: AcquireResult } | { kind: 'cancelled' };

export interface AcquireSyncOptions {
  /**
   * Receives entries in batches, in the order they were read, while the walk runs; the result then holds
   * only the rest, and the receiver sorts the union by uri. Without it, the result holds every entry.
   * In manifest mode the batches are manifest entries (the result then gives their order).
   */
  onEntries?: (batch: SurfaceEntry[] | ManifestEntry[]) => void;
  /**
   * A second reader thread for this acquisition (read-lanes.ts), used by glob observations only: an exact
   * locator reads one file, and a manifest keeps each file's digest beside its other fields in order.
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
    if (error instanceof AcquisitionCancelled) return { kind: 'cancelled' };
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
  let rootReal: string;
  let rootFd: number;
  try {
    rootReal = fs.resolveRoot(request.root);
    rootFd = fs.openRoot(rootReal);
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
      if (!fs.procIsTrusted()) throw new Error('/proc is not procfs');
      rootPath = fs.handlePath(rootFd);
    } catch (error) {
      rethrowCancelled(error);
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
          rootPath: rootReal,
        },
      };
    }
    const state = new AcquisitionState(fs, request.limits, rootPath, rootFd, cancelled, scratchChunk());
    // A manifest's batches are manifest entries (DigestCarryWalk posts them); observation entries never.
    state.entrySink = request.mode === 'manifest' ? undefined : options.onEntries;
    if (request.mode === 'manifest') {
      if (locator.match !== 'glob' || locator.uri !== '/**') throw new Error('a manifest walks /** (glob)');
      state.manifest = [];
      state.digestCarry = new DigestCarryWalk(request.carry, state.manifest, options.onEntries);
    }
    const lanes =
      options.helper !== undefined && locator.match === 'glob' && state.manifest === undefined
        ? sharedLanes(
            state.reader,
            options.helper,
            (seq, gap) => state.taskGap(seq, gap),
            () => state.checkCancelled(),
          )
        : undefined;
    if (lanes !== undefined) state.lanes = lanes;
    let walked = false;
    try {
      if (locator.match === 'exact') walkExact(state, request.uri, locator.segments);
      else walkGlob(state, locator);
      state.lanes.finish();
      walked = true;
    } finally {
      // Cancelled or failed: the handles still queued are closed unread, and the helper is told to stop.
      if (!walked) state.lanes.abandon();
    }
    const gaps = state.orderedGaps();
    const entries = state.entries.sort((a, b) => (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0));
    const manifest = state.digestCarry?.finish();
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
              carried: manifest.carried,
              ...(manifest.order === undefined ? {} : { manifestOrder: manifest.order }),
            }),
        ...(request.carry === undefined || state.digestCarry === undefined
          ? {}
          : { carryCounts: state.digestCarry.counts }),
        ...(lanes === undefined ? {} : { helperBatches: lanes.helperBatches }),
      },
    };
  } finally {
    fs.close(rootFd);
  }
}
