import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { InvalidOptionError } from '../errors.js';
import {
  checkObservation,
  checkObservationOfCheckedEntries,
  checkSurfaceEntries,
  mergeCheckedEntries,
} from '../models/checked-observation.js';
import type { ComponentIdentifier } from '../models/identifier.js';
import { parseLocator } from '../models/locator.js';
import type { Manifest, ManifestEntry } from '../models/manifest.js';
import { type Observation, type SurfaceEntry, uniqueReasons } from '../models/observation.js';
import { parseRecord } from '../models/record.js';
import { type SurfaceScorable, SurfaceScorableSchema } from '../models/scorable.js';
import { MATCH_KINDS, type MatchKind, type Surface } from '../models/vocabulary.js';
import {
  SURFACE_FS_KINDS,
  type SurfaceFsImplementation,
  type SurfaceFsKind,
} from './confined-fs/surface-fs-choice.js';
import { type ClockMark, checkClockSince } from './file-system-clock.js';
import type { AcquireOutcome, AcquireRequest, AcquireResult } from './local-file/acquire-sync.js';
import { acquisitionPool, type PoolJob, type PoolTicket } from './local-file/acquisition-pool.js';
import { type BaselineDigests, mergeReused } from './local-file/baseline-digests.js';
import { DEFAULT_LIMITS, resolveLimits, type SourceLimits } from './local-file/limits.js';
import type { LookupResult, MergedLookups } from './local-file/manifest-lookups.js';
import { SurfaceEntryUnpacker } from './local-file/surface-entry-unpacking.js';
import type { AcquireOptions, SurfaceSource } from './surface-source.js';

/** The budgets and seam choices a source takes, for the package root (src/index.ts). */
export { DEFAULT_LIMITS, type SourceLimits, SURFACE_FS_KINDS, type SurfaceFsKind };

const isMatchKind = (value: unknown): value is MatchKind =>
  (MATCH_KINDS as readonly unknown[]).includes(value);

/**
 * Reads evidence for surface scorables under one workspace root, bounded by budgets and confined to the
 * root through handles (SPEC §5, §5.1). Acquisitions run on the process's shared pool of acquisition
 * threads (one per core, acquisition-pool.ts); its threads are released (unref'd) whenever no
 * acquisition is in flight, so a script using a source exits on its own.
 *
 * @example
 * const source = new LocalFileSurfaceSource({ root: '/tmp/ws' });
 * const observation = await source.acquire(surface('/.git/hooks/pre-commit'));
 */

export interface LocalFileSurfaceSourceOptions extends Partial<SourceLimits> {
  /**
   * The workspace root. Resolved at every acquisition, not here: the kernel follows its links as it opens
   * the root, and the observation's `metadata.resolvedRoot` is where that handle is.
   */
  root: string;
  /**
   * How handles are opened and proven inside the root: `auto` (default) uses openat2(2) when the kernel
   * and koffi allow it, else procfs; `openat2` or `procfs` forces one (an unavailable `openat2` makes
   * every acquisition an error observation naming the reason). The rules enforced are the same.
   */
  surfaceFs?: SurfaceFsKind;
}

/** Where a final manifest may take digests from instead of reading (baseline-digests.ts). */
export interface DigestBaseline {
  /** The baseline manifest, taken by the same source. */
  baseline: Manifest;
  /** The file system's clock once the baseline was complete, before the agent started. */
  mark: ClockMark;
}

export interface AcquireManifestOptions extends AcquireOptions {
  /** Which surface the root is (the workspace or the attempt's home); `workspace` by default. */
  surface?: Surface;
  /**
   * Reuse the baseline's digest for every file that provably did not change since the mark (same stat
   * key, ctime strictly older than the mark); every other file is read and hashed. The manifest's
   * `metadata.stats.digestsCarried` counts the reused digests and `metadata.carryOver` says how each file
   * was decided, or why digest reuse was declined.
   */
  reuseDigestsFrom?: DigestBaseline;
  /**
   * Exact uris each looked up on its own beside the walk, with budgets of their own and links beneath the
   * root followed (SPEC §13): the manifest's entry at each (or its absence) is the lookup's, recorded in
   * `lookups`, so a budget the walk ran out of elsewhere in the tree cannot hide what is at that uri. Give
   * the uris of the exact conditions the manifest will judge.
   */
  lookups?: readonly string[];
}

export const LOCAL_FILE_SOURCE_TYPE = 'LocalFileSurfaceSource';
export const LOCAL_FILE_SOURCE_VERSION = '1';

/** What the worker sent for one job: its outcome, and the entries that arrived in batches before it. */
interface Finished<E = SurfaceEntry> {
  outcome: AcquireOutcome;
  /** Absent when the job was cancelled before a worker took it. */
  implementation: SurfaceFsImplementation | undefined;
  /**
   * The streamed entries as checked, frozen lists (surface-entry-unpacking.ts for a glob: a list per batch, made
   * once its arena is complete or the job is done; manifest-entry-unpacking.ts for a manifest: a list per batch).
   */
  lists: E[][];
  /** The first batch that failed validation, if any: the acquisition then rejects with it. */
  invalid: unknown;
}

/** Checks one job's streamed batches: lists out as they are complete, and the rest at the end. */
interface BatchUnpacker<E> {
  receive(batch: unknown): E[][];
  finish(): E[][];
}

/** A manifest walk's entries, gaps and stat keys, with the looked-up uris once lookups were merged in. */
type WalkWithLookups = Omit<MergedLookups, 'lookups'> & { lookups?: string[] | undefined };

/** A walk's manifest metadata: the resolved root, the duration, the stats and what the baseline carried. */
function walkMetadata(
  result: AcquireResult,
  durationMs: number,
  carryOver: Record<string, string | number> | undefined,
): Record<string, unknown> {
  return {
    ...(result.rootPath !== undefined ? { resolvedRoot: result.rootPath } : {}),
    durationMs,
    stats: { ...result.stats, digestsCarried: result.reuseCounts?.carried ?? 0 },
    ...(carryOver === undefined ? {} : { carryOver: { ...carryOver, ...(result.reuseCounts ?? {}) } }),
  };
}
/** How a pool job ended, once cancellation has been turned into the signal's rejection. */
type SettledOutcome = Exclude<AcquireOutcome, { kind: 'cancelled' }> | { kind: 'failed'; message: string };

export class LocalFileSurfaceSource implements SurfaceSource {
  readonly root: string;
  readonly limits: Readonly<SourceLimits>;
  readonly surfaceFs: SurfaceFsKind;
  /**
   * The stat keys of the manifests this source took (baseline-digests.ts), aligned with their entries, held
   * in memory only and only as long as the manifest object lives: what a later manifest of this root
   * may reuse from.
   */
  readonly #statKeys = new WeakMap<Manifest, Float64Array>();
  /** This source's acquisitions still running or queued in the pool (close() ends them). */
  readonly #inFlight = new Set<{ fail: (error: unknown) => void; ticket: PoolTicket | undefined }>();

  constructor(options: LocalFileSurfaceSourceOptions) {
    if (options === null || typeof options !== 'object') {
      throw new InvalidOptionError('LocalFileSurfaceSource needs options: { root, maxFiles?, ... }');
    }
    if (typeof options.root !== 'string' || options.root === '' || options.root.includes('\0')) {
      throw new InvalidOptionError('root must be a non-empty path string without NUL bytes');
    }
    const surfaceFs = options.surfaceFs ?? 'auto';
    if (!(SURFACE_FS_KINDS as readonly unknown[]).includes(surfaceFs)) {
      throw new InvalidOptionError(
        `surfaceFs must be one of ${SURFACE_FS_KINDS.join(', ')}, got ${JSON.stringify(surfaceFs) ?? String(surfaceFs)}`,
      );
    }
    this.root = path.resolve(options.root);
    this.limits = Object.freeze(resolveLimits(options));
    this.surfaceFs = surfaceFs;
  }

  identifier(): ComponentIdentifier {
    return {
      type: LOCAL_FILE_SOURCE_TYPE,
      version: LOCAL_FILE_SOURCE_VERSION,
      params: { root: this.root, ...this.limits },
    };
  }

  async acquire(scorable: SurfaceScorable, options: AcquireOptions = {}): Promise<Observation> {
    // The locator rules come first so that an empty uri gets the locator's own error, not a schema one.
    const candidate = scorable as Partial<SurfaceScorable> | null;
    const uri = candidate?.uri;
    const match = candidate?.match;
    let parsed: { uri: string; match: MatchKind } | undefined;
    if (typeof uri === 'string' && (match === undefined || isMatchKind(match))) {
      parsed = parseLocator(uri, match);
    }
    const scope = parseRecord(SurfaceScorableSchema, scorable, 'surface scorable');
    // The schema read the object again (a getter may answer differently) and filled in the default
    // match: the scope is parsed unless it is exactly the uri and match parsed above.
    if (parsed === undefined || parsed.uri !== scope.uri || parsed.match !== scope.match) {
      parseLocator(scope.uri, scope.match);
    }
    const { signal } = options;
    signal?.throwIfAborted();
    const observedMs = Date.now();
    const started = performance.now();
    const request: AcquireRequest = {
      root: this.root,
      uri: scope.uri,
      match: scope.match,
      limits: { ...this.limits },
    };
    const running = this.#runAbortable(request, signal, new SurfaceEntryUnpacker());
    // The job is posted: what the record needs that does not depend on the reply is made while the
    // pool thread walks (the time of observation was taken before it was posted).
    let made: { id: string; sourceIdentifier: ComponentIdentifier; observedAt: string };
    try {
      made = {
        id: randomUUID(),
        sourceIdentifier: this.identifier(),
        observedAt: new Date(observedMs).toISOString(),
      };
    } catch (error) {
      // A subclass's identifier() threw: the job's own outcome is no longer awaited by anyone.
      running.catch(() => {});
      throw error;
    }
    const { outcome, finished } = await running;
    const streamed: SurfaceEntry[][] = finished?.lists ?? [];
    const implementation: SurfaceFsImplementation | undefined = finished?.implementation;
    const invalid: unknown = finished?.invalid;
    if (invalid !== undefined) throw invalid;
    const durationMs = Math.round((performance.now() - started) * 1000) / 1000;
    if (outcome.kind !== 'done') {
      return checkObservation(this.#errorObservation(scope, made.observedAt, outcome.message, durationMs));
    }
    // Every entry is validated once — the streamed ones as they arrived, the rest now — and merged into
    // one sorted list that only checked lists can make; the record as a whole (sorted, unique uris, the
    // scope matching each, coverage and status rules) is validated below, then deep-frozen.
    const rest = checkSurfaceEntries(outcome.result.entries);
    // One checked list of at most one entry (an exact locator's) is already the merged list.
    const entries =
      streamed.length === 0 && rest.length < 2 ? rest : mergeCheckedEntries([...streamed, rest]);
    return checkObservationOfCheckedEntries(
      this.#observation(made, scope, outcome.result, entries, durationMs, implementation),
    );
  }

  /**
   * A manifest of everything under the root (SPEC §12): the same walk, confinement, budgets and gaps as
   * an acquisition of `/**`, recording directories, symlinks (never followed) and other objects (never
   * opened) beside files. `surface` labels which surface the root is (the workspace or the attempt's home).
   */
  async acquireManifest(options: AcquireManifestOptions = {}): Promise<Manifest> {
    // The manifest schemas load with the first manifest: `witness score` and `observe` never construct
    // them, and their start-up is measured.
    const [
      { checkManifest, checkManifestEntries, checkManifestReusingEntries, pickCheckedManifestEntries },
      { unpackManifestEntries },
    ] = await Promise.all([
      import('../models/manifest.js'),
      import('./local-file/manifest-entry-unpacking.js'),
    ]);
    const { signal } = options;
    signal?.throwIfAborted();
    const takenAt = new Date().toISOString();
    const started = performance.now();
    const reuse = this.#reuseRequest(options.reuseDigestsFrom);
    // Validated before any I/O, as every locator is; sorted and unique.
    const looked = [...new Set((options.lookups ?? []).map((uri) => parseLocator(uri, 'exact').uri))].sort();
    const request: AcquireRequest = {
      root: this.root,
      uri: '/**',
      match: 'glob',
      limits: { ...this.limits },
      mode: 'manifest',
      ...(reuse.request === undefined ? {} : { reuse: reuse.request }),
    };
    const { outcome, finished } = await this.#runAbortable(request, signal, {
      receive: (batch) => [unpackManifestEntries(batch)],
      finish: () => [],
    });
    if (finished?.invalid !== undefined) throw finished.invalid;
    const durationMs = Math.round((performance.now() - started) * 1000) / 1000;
    const base = {
      schemaVersion: 1,
      surface: options.surface ?? 'workspace',
      sourceIdentifier: this.identifier(),
      takenAt,
    };
    if (outcome.kind !== 'done') {
      return checkManifest({
        ...base,
        acquisition: 'error',
        entries: [],
        coverage: { complete: false, reasons: [], gaps: [] },
        metadata: { error: outcome.message, durationMs },
      });
    }
    const { result } = outcome;
    // Entries posted while the walk ran were checked as they arrived; the rest are checked now. The
    // manifest's list is picked from those checked lists (and the baseline's), in uri order.
    const walked = [...(finished?.lists ?? []), checkManifestEntries(result.manifest ?? [])];
    const picks = manifestPicks(walked, result.manifestOrder, result.reused, reuse.baseline);
    if (reuse.baseline !== undefined) walked.push(reuse.baseline.entries);
    const walk: WalkWithLookups = {
      entries: pickCheckedManifestEntries(walked, picks),
      gaps: result.gaps,
      keys: result.statKeys,
    };
    // An unavailable root has nothing to look up in (and the manifest says so).
    const merged =
      looked.length > 0 && result.acquisition !== 'unavailable'
        ? await this.#withLookups(walk, looked, signal, checkManifestEntries)
        : walk;
    const { entries, gaps, keys: statKeys, lookups } = merged;
    // A lookup's gap makes a complete walk's manifest partial; nothing else changes the walk's status.
    const acquisition = result.acquisition === 'complete' && gaps.length > 0 ? 'partial' : result.acquisition;
    const manifest = checkManifestReusingEntries({
      ...base,
      acquisition,
      entries,
      coverage: {
        complete: acquisition === 'complete',
        reasons: uniqueReasons(gaps),
        gaps,
      },
      ...(lookups === undefined ? {} : { lookups }),
      metadata: walkMetadata(result, durationMs, reuse.metadata),
    });
    if (statKeys !== undefined) this.#statKeys.set(manifest, statKeys);
    return manifest;
  }

  /** The walk's entries, gaps and keys with each looked-up uri's own merged in (when any lookup ran). */
  async #withLookups(
    walk: WalkWithLookups,
    looked: readonly string[],
    signal: AbortSignal | undefined,
    check: (batch: readonly unknown[]) => ManifestEntry[],
  ): Promise<WalkWithLookups> {
    const results = await this.#lookUp(looked, signal, check);
    if (results.length === 0) return walk;
    const { mergeLookups } = await import('./local-file/manifest-lookups.js');
    return mergeLookups(walk.entries, walk.keys, walk.gaps, results);
  }

  /**
   * Each uri looked up on its own (local-file/exact-lookup.ts), one job each, one after the other. A
   * lookup that could not run (the root became unavailable, a thread failed) is left out: its uri is then
   * judged from the walk, as without lookups.
   */
  async #lookUp(
    uris: readonly string[],
    signal: AbortSignal | undefined,
    check: (batch: readonly unknown[]) => ManifestEntry[],
  ): Promise<LookupResult[]> {
    const out: LookupResult[] = [];
    for (const uri of uris) {
      const request: AcquireRequest = {
        root: this.root,
        uri,
        match: 'exact',
        limits: { ...this.limits },
        mode: 'lookup',
      };
      const { outcome, finished } = await this.#runAbortable(request, signal, {
        receive: () => [],
        finish: () => [],
      });
      if (finished?.invalid !== undefined) throw finished.invalid;
      if (outcome.kind !== 'done' || outcome.result.acquisition === 'unavailable') continue;
      out.push({ uri, entries: check(outcome.result.manifest ?? []), gaps: outcome.result.gaps });
    }
    return out;
  }

  /**
   * What a final manifest may reuse from `reuseDigestsFrom` (baseline-digests.ts), and what its metadata says about
   * it. Digest reuse is declined, with the reason recorded, when the baseline was not taken by this source
   * (its stat keys are only ever held here, in memory, for manifests this source took: a stored or
   * foreign manifest cannot vouch for this root), when the file system does not keep ctime by the local
   * clock, or when the clock went back since the mark.
   */
  #reuseRequest(reuseDigestsFrom: DigestBaseline | undefined): {
    request?: BaselineDigests;
    baseline?: Manifest;
    metadata?: Record<string, string | number>;
  } {
    if (reuseDigestsFrom === undefined) return {};
    const { baseline, mark } = reuseDigestsFrom;
    const described = {
      baselineTakenAt: baseline.takenAt,
      cleanBefore: new Date(Math.floor(mark.ctimeMs)).toISOString(),
      fileSystem: mark.fileSystem ?? `0x${mark.fileSystemType.toString(16)}`,
    };
    const keys = this.#statKeys.get(baseline);
    if (keys === undefined) {
      return { metadata: { ...described, declined: 'the baseline was not taken by this source' } };
    }
    const clock = checkClockSince(mark);
    if (!clock.ok) return { metadata: { ...described, declined: clock.reason } };
    return {
      request: {
        uris: baseline.entries.map((entry) => entry.uri),
        keys,
        cleanBeforeMs: mark.ctimeMs,
        dev: mark.dev,
      },
      baseline,
      metadata: described,
    };
  }

  /**
   * Ends this source's acquisitions still queued or running (each returns an error observation) and
   * stops their I/O. Not needed for a script to exit: the shared threads are released when idle. The
   * source stays usable. To free the threads themselves, see `releaseAcquisitionThreads`.
   */
  async close(): Promise<void> {
    for (const inFlight of this.#inFlight) {
      inFlight.fail(new Error('the source was closed during the acquisition'));
      inFlight.ticket?.cancel();
    }
    this.#inFlight.clear();
  }

  #observation(
    made: { id: string; sourceIdentifier: ComponentIdentifier; observedAt: string },
    scope: SurfaceScorable,
    result: AcquireResult,
    entries: SurfaceEntry[],
    durationMs: number,
    implementation: SurfaceFsImplementation | undefined,
  ): Observation {
    // The metadata's keys in the order the record has always had them (resolvedRoot, durationMs,
    // stats, surfaceFs), set one by one rather than spread from conditional objects.
    const metadata: Observation['metadata'] = {};
    if (result.rootPath !== undefined) metadata.resolvedRoot = result.rootPath;
    metadata.durationMs = durationMs;
    metadata.stats = { ...result.stats };
    if (implementation !== undefined) metadata.surfaceFs = implementation;
    return {
      id: made.id,
      sourceIdentifier: made.sourceIdentifier,
      acquisition: result.acquisition,
      observedAt: made.observedAt,
      scorable: scope,
      payload: {
        kind: 'surface',
        schemaVersion: 1,
        scope,
        entries,
        coverage: {
          complete: result.acquisition === 'complete',
          reasons: result.gaps.length === 0 ? [] : uniqueReasons(result.gaps),
          gaps: result.gaps,
        },
      },
      metadata,
    };
  }

  #errorObservation(
    scope: SurfaceScorable,
    observedAt: string,
    message: string,
    durationMs: number,
  ): Observation {
    return {
      id: randomUUID(),
      sourceIdentifier: this.identifier(),
      acquisition: 'error',
      observedAt,
      scorable: scope,
      payload: {
        kind: 'surface',
        schemaVersion: 1,
        scope,
        entries: [],
        coverage: { complete: false, reasons: [], gaps: [] },
      },
      metadata: { error: message, durationMs },
    };
  }

  /**
   * Runs one job on the shared pool. A queued job is withdrawn at once on abort; a running one sees the
   * flag at its next entry or chunk. Whatever the worker finished with, an aborted acquisition rejects with
   * the signal's reason (the worker has already closed its handles and stopped); a worker failure becomes
   * a `failed` outcome, never a throw. Streamed batches go to `unpacker` as they arrive, while the worker
   * keeps walking; after one invalid batch the rest are ignored and the acquisition rejects when the
   * worker finishes.
   */
  async #runAbortable<E>(
    request: AcquireRequest,
    signal: AbortSignal | undefined,
    unpacker: BatchUnpacker<E>,
  ): Promise<{ outcome: SettledOutcome; finished?: Finished<E> }> {
    const { finished: running, ticket } = this.#run(
      { request, cancel: new SharedArrayBuffer(4), surfaceFs: this.surfaceFs },
      unpacker,
    );
    const onAbort = () => ticket.cancel();
    signal?.addEventListener('abort', onAbort, { once: true });
    let result: { outcome: AcquireOutcome | { kind: 'failed'; message: string }; finished?: Finished<E> };
    try {
      const finished = await running;
      result = { outcome: finished.outcome, finished };
    } catch (error) {
      result = {
        outcome: { kind: 'failed', message: error instanceof Error ? error.message : String(error) },
      };
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
    signal?.throwIfAborted();
    if (result.outcome.kind === 'cancelled') {
      throw new Error('acquisition cancelled without an aborted signal: a bug');
    }
    return { ...result, outcome: result.outcome as SettledOutcome };
  }

  #run<E>(job: PoolJob, unpacker: BatchUnpacker<E>): { finished: Promise<Finished<E>>; ticket: PoolTicket } {
    const lists: E[][] = [];
    let invalid: unknown;
    let settle!: { resolve: (finished: Finished<E>) => void; reject: (error: unknown) => void };
    const finished = new Promise<Finished<E>>((resolve, reject) => {
      settle = { resolve, reject };
    });
    const inFlight = {
      fail: (error: unknown) => settle.reject(error),
      ticket: undefined as PoolTicket | undefined,
    };
    this.#inFlight.add(inFlight);
    const ticket = acquisitionPool.submit(job, {
      onEntries: (batch) => {
        if (invalid !== undefined) return;
        try {
          lists.push(...unpacker.receive(batch));
        } catch (error) {
          invalid = error;
        }
      },
      onDone: (outcome, implementation) => {
        this.#inFlight.delete(inFlight);
        if (invalid === undefined && outcome.kind === 'done') {
          try {
            lists.push(...unpacker.finish());
          } catch (error) {
            invalid = error;
          }
        }
        settle.resolve({ outcome, implementation, lists, invalid });
      },
      onFailure: (error) => {
        this.#inFlight.delete(inFlight);
        settle.reject(error);
      },
    });
    inFlight.ticket = ticket;
    return { finished, ticket };
  }
}

/**
 * Terminates the idle threads of the shared acquisition pool now (they are otherwise released after a
 * minute idle). Running acquisitions finish; the next acquisition starts a thread again.
 */
export function releaseAcquisitionThreads(): Promise<void> {
  return acquisitionPool.releaseIdle();
}

/**
 * Where each entry of a manifest comes from, in uri order, as (list, index) pairs for
 * pickCheckedManifestEntries: the walk's entries arrived in `lists` (walk order; `order` gives their walk
 * positions in uri order, or is undefined when walk order is uri order), merged by uri with the files
 * reused from `baseline` (list `lists.length`: the caller appends the baseline's entries after these).
 */
function manifestPicks(
  lists: readonly ManifestEntry[][],
  order: Int32Array | undefined,
  reused: Int32Array | undefined,
  baseline: Manifest | undefined,
): Int32Array {
  let total = 0;
  for (const list of lists) total += list.length;
  // Walk position → (list, index).
  const at = new Int32Array(total * 2);
  let p = 0;
  for (let l = 0; l < lists.length; l++) {
    const length = (lists[l] as ManifestEntry[]).length;
    for (let i = 0; i < length; i++, p++) {
      at[2 * p] = l;
      at[2 * p + 1] = i;
    }
  }
  const positionOf = (i: number) => (order === undefined ? i : (order[i] as number));
  if (order !== undefined && order.length !== total) {
    throw new Error(`the walk ordered ${order.length} of ${total} manifest entries: a bug`);
  }
  if (baseline === undefined || reused === undefined) {
    const picks = new Int32Array(total * 2);
    for (let i = 0; i < total; i++) {
      const q = positionOf(i);
      picks[2 * i] = at[2 * q] as number;
      picks[2 * i + 1] = at[2 * q + 1] as number;
    }
    return picks;
  }
  const read: ManifestEntry[] = new Array(total);
  for (let i = 0; i < total; i++) {
    const q = positionOf(i);
    read[i] = (lists[at[2 * q] as number] as ManifestEntry[])[at[2 * q + 1] as number] as ManifestEntry;
  }
  const picks = new Int32Array((total + reused.length) * 2);
  let k = 0;
  const uriOf = (index: number) => {
    const entry = baseline.entries[index];
    if (entry?.type !== 'file')
      throw new Error(`digest reuse named baseline entry ${index}, not a file: a bug`);
    return entry.uri;
  };
  mergeReused(
    read,
    reused,
    uriOf,
    (i) => {
      const q = positionOf(i);
      picks[k++] = at[2 * q] as number;
      picks[k++] = at[2 * q + 1] as number;
    },
    (index) => {
      picks[k++] = lists.length;
      picks[k++] = index;
    },
  );
  return picks;
}
