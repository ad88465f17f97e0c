import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { InvalidOptionError } from '../errors.js';
import type { ComponentIdentifier } from '../models/identifier.js';
import { parseLocator } from '../models/locator.js';
import { checkObservation, type Observation, uniqueReasons } from '../models/observation.js';
import { parseRecord } from '../models/record.js';
import { type SurfaceScorable, SurfaceScorableSchema } from '../models/scorable.js';
import { MATCH_KINDS, type MatchKind } from '../models/vocabulary.js';
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

interface Pending {
  resolve: (outcome: AcquireOutcome) => void;
  reject: (error: unknown) => void;
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
    try {
      outcome = await this.#run({ id: this.#nextId++, request, cancel });
    } catch (error) {
      outcome = { kind: 'failed', message: error instanceof Error ? error.message : String(error) };
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
    // Whatever the worker finished with, an aborted acquisition rejects with the signal's reason; the
    // worker has already closed its handles and stopped.
    signal?.throwIfAborted();
    if (outcome.kind === 'cancelled') throw new Error('acquisition cancelled without an aborted signal');
    const durationMs = Math.round((performance.now() - started) * 1000) / 1000;
    const observation =
      outcome.kind === 'done'
        ? this.#observation(scope, observedAt, outcome.result, durationMs)
        : this.#errorObservation(scope, observedAt, outcome.message, durationMs);
    return checkObservation(observation);
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
        entries: result.entries,
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

  #run(job: AcquireJob): Promise<AcquireOutcome> {
    const worker = this.#ensureWorker();
    return new Promise<AcquireOutcome>((resolve, reject) => {
      this.#pending.set(job.id, { resolve, reject });
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
      this.#pending.delete(reply.id);
      if (this.#pending.size === 0) worker.unref();
      if ('outcome' in reply) pending.resolve(reply.outcome);
      else pending.reject(Object.assign(new Error(reply.failure.message), { name: reply.failure.name }));
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
