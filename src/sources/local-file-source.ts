import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { InvalidOptionError } from '../errors.js';
import type { ComponentIdentifier } from '../models/identifier.js';
import { parseLocator } from '../models/locator.js';
import { checkManifest, type Manifest } from '../models/manifest.js';
import {
  checkObservation,
  checkObservationOfCheckedEntries,
  checkSurfaceEntries,
  type Observation,
  type SurfaceEntry,
  uniqueReasons,
} from '../models/observation.js';
import { parseRecord } from '../models/record.js';
import { type SurfaceScorable, SurfaceScorableSchema } from '../models/scorable.js';
import { MATCH_KINDS, type MatchKind, type Surface } from '../models/vocabulary.js';
import type { AcquireOutcome, AcquireRequest, AcquireResult } from './local-file/acquire-sync.js';
import type { AcquireJob, AcquireReply } from './local-file/acquire-worker.js';
import { resolveLimits, type SourceLimits } from './local-file/limits.js';
import type { AcquireOptions, SurfaceSource } from './surface-source.js';

const isMatchKind = (value: unknown): value is MatchKind =>
  (MATCH_KINDS as readonly unknown[]).includes(value);

/**
 * Reads evidence for surface scorables under one workspace root, bounded by budgets and confined to the
 * root through handles (SPEC §5, §5.1). Acquisitions run in a worker thread; the worker is released
 * (unref'd) whenever no acquisition is in flight, so a script using a source exits on its own.
 *
 * @example
 * const source = new LocalFileSurfaceSource({ root: '/tmp/ws' });
 * const observation = await source.acquire(surface('/.git/hooks/pre-commit'));
 */

export interface LocalFileSurfaceSourceOptions extends Partial<SourceLimits> {
  /** The workspace root. Resolved (realpath) at every acquisition, not here. */
  root: string;
}

export const LOCAL_FILE_SOURCE_TYPE = 'LocalFileSurfaceSource';
export const LOCAL_FILE_SOURCE_VERSION = '1';

/** What the worker sent for one job: its outcome, and the entries that arrived in batches before it. */
interface Finished {
  outcome: AcquireOutcome;
  /** Validated and frozen as each batch arrived (checkSurfaceEntries), in the order they were read. */
  entries: SurfaceEntry[];
  /** The first batch that failed validation, if any: the acquisition then rejects with it. */
  invalid: unknown;
}

interface Pending {
  resolve: (finished: Finished) => void;
  reject: (error: unknown) => void;
  entries: SurfaceEntry[];
  invalid: unknown;
}

export class LocalFileSurfaceSource implements SurfaceSource {
  readonly root: string;
  readonly limits: Readonly<SourceLimits>;
  #worker: Worker | undefined;
  #pending = new Map<number, Pending>();
  #nextId = 1;

  constructor(options: LocalFileSurfaceSourceOptions) {
    if (options === null || typeof options !== 'object') {
      throw new InvalidOptionError('LocalFileSurfaceSource needs options: { root, maxFiles?, ... }');
    }
    if (typeof options.root !== 'string' || options.root === '' || options.root.includes('\0')) {
      throw new InvalidOptionError('root must be a non-empty path string without NUL bytes');
    }
    this.root = path.resolve(options.root);
    this.limits = Object.freeze(resolveLimits(options));
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
    if (
      typeof candidate?.uri === 'string' &&
      (candidate.match === undefined || isMatchKind(candidate.match))
    ) {
      parseLocator(candidate.uri, candidate.match);
    }
    const scope = parseRecord(SurfaceScorableSchema, scorable, 'surface scorable');
    parseLocator(scope.uri, scope.match);
    const { signal } = options;
    signal?.throwIfAborted();
    const observedAt = new Date().toISOString();
    const started = performance.now();
    const request: AcquireRequest = {
      root: this.root,
      uri: scope.uri,
      match: scope.match,
      limits: { ...this.limits },
    };
    const cancel = new SharedArrayBuffer(4);
    const flag = new Int32Array(cancel);
    const onAbort = () => Atomics.store(flag, 0, 1);
    signal?.addEventListener('abort', onAbort, { once: true });
    let outcome: AcquireOutcome | { kind: 'failed'; message: string };
    let streamed: SurfaceEntry[] = [];
    let invalid: unknown;
    try {
      const finished = await this.#run({ id: this.#nextId++, request, cancel });
      outcome = finished.outcome;
      streamed = finished.entries;
      invalid = finished.invalid;
    } catch (error) {
      outcome = { kind: 'failed', message: error instanceof Error ? error.message : String(error) };
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
    // Whatever the worker finished with, an aborted acquisition rejects with the signal's reason; the
    // worker has already closed its handles and stopped.
    signal?.throwIfAborted();
    if (outcome.kind === 'cancelled') throw new Error('acquisition cancelled without an aborted signal');
    if (invalid !== undefined) throw invalid;
    const durationMs = Math.round((performance.now() - started) * 1000) / 1000;
    if (outcome.kind !== 'done') {
      return checkObservation(this.#errorObservation(scope, observedAt, outcome.message, durationMs));
    }
    // Every entry is validated once — the streamed ones as they arrived, the rest now — and the record as
    // a whole (sorted, unique uris, coverage and status rules) is validated below, then deep-frozen.
    const entries = streamed.concat(checkSurfaceEntries(outcome.result.entries));
    entries.sort((a, b) => (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0));
    return checkObservationOfCheckedEntries(
      this.#observation(scope, observedAt, outcome.result, entries, durationMs),
    );
  }

  /**
   * A manifest of everything under the root (SPEC §12): the same walk, confinement, budgets and gaps as
   * an acquisition of `/**`, recording directories, symlinks (never followed) and other objects (never
   * opened) beside files. `surface` labels which surface the root is (the workspace or the attempt's home).
   */
  async acquireManifest(options: AcquireOptions & { surface?: Surface } = {}): Promise<Manifest> {
    const { signal } = options;
    signal?.throwIfAborted();
    const takenAt = new Date().toISOString();
    const started = performance.now();
    const request: AcquireRequest = {
      root: this.root,
      uri: '/**',
      match: 'glob',
      limits: { ...this.limits },
      mode: 'manifest',
    };
    const cancel = new SharedArrayBuffer(4);
    const flag = new Int32Array(cancel);
    const onAbort = () => Atomics.store(flag, 0, 1);
    signal?.addEventListener('abort', onAbort, { once: true });
    let outcome: AcquireOutcome | { kind: 'failed'; message: string };
    try {
      outcome = (await this.#run({ id: this.#nextId++, request, cancel })).outcome;
    } catch (error) {
      outcome = { kind: 'failed', message: error instanceof Error ? error.message : String(error) };
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
    signal?.throwIfAborted();
    if (outcome.kind === 'cancelled') throw new Error('acquisition cancelled without an aborted signal');
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
    return checkManifest({
      ...base,
      acquisition: result.acquisition,
      entries: result.manifest ?? [],
      coverage: {
        complete: result.acquisition === 'complete',
        reasons: uniqueReasons(result.gaps),
        gaps: result.gaps,
      },
      metadata: {
        ...(result.rootPath !== undefined ? { resolvedRoot: result.rootPath } : {}),
        durationMs,
        stats: { ...result.stats },
      },
    });
  }

  /** Stops the worker now. Not needed for a script to exit; useful to free the thread early. */
  async close(): Promise<void> {
    const worker = this.#worker;
    this.#worker = undefined;
    if (worker !== undefined) await worker.terminate();
  }

  #observation(
    scope: SurfaceScorable,
    observedAt: string,
    result: AcquireResult,
    entries: SurfaceEntry[],
    durationMs: number,
  ): Observation {
    return {
      id: randomUUID(),
      sourceIdentifier: this.identifier(),
      acquisition: result.acquisition,
      observedAt,
      scorable: scope,
      payload: {
        kind: 'surface',
        schemaVersion: 1,
        scope,
        entries,
        coverage: {
          complete: result.acquisition === 'complete',
          reasons: uniqueReasons(result.gaps),
          gaps: result.gaps,
        },
      },
      metadata: {
        ...(result.rootPath !== undefined ? { resolvedRoot: result.rootPath } : {}),
        durationMs,
        stats: { ...result.stats },
      },
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

  #run(job: AcquireJob): Promise<Finished> {
    const worker = this.#ensureWorker();
    return new Promise<Finished>((resolve, reject) => {
      this.#pending.set(job.id, { resolve, reject, entries: [], invalid: undefined });
      worker.ref();
      worker.postMessage(job);
    });
  }

  #ensureWorker(): Worker {
    if (this.#worker !== undefined) return this.#worker;
    const worker = new Worker(new URL('./local-file/acquire-worker.js', import.meta.url));
    worker.unref();
    worker.on('message', (reply: AcquireReply) => {
      const pending = this.#pending.get(reply.id);
      if (pending === undefined) return;
      if ('entries' in reply) {
        // Validated on arrival, while the worker keeps walking; after one invalid batch the rest is
        // ignored and the acquisition rejects when the worker finishes.
        if (pending.invalid !== undefined) return;
        try {
          for (const entry of checkSurfaceEntries(reply.entries)) pending.entries.push(entry);
        } catch (error) {
          pending.invalid = error;
        }
        return;
      }
      this.#pending.delete(reply.id);
      if (this.#pending.size === 0) worker.unref();
      if ('outcome' in reply) {
        pending.resolve({ outcome: reply.outcome, entries: pending.entries, invalid: pending.invalid });
      } else pending.reject(Object.assign(new Error(reply.failure.message), { name: reply.failure.name }));
    });
    const failAll = (error: unknown) => {
      if (this.#worker === worker) this.#worker = undefined;
      for (const pending of this.#pending.values()) pending.reject(error);
      this.#pending.clear();
    };
    worker.on('error', failAll);
    worker.on('exit', (code) => failAll(new Error(`the acquisition worker exited (code ${code})`)));
    this.#worker = worker;
    return worker;
  }
}
