import os from 'node:os';
import { Worker } from 'node:worker_threads';
import type { ManifestEntry } from '../../models/manifest.js';
import type { SurfaceEntry } from '../../models/observation.js';
import type { AcquireOutcome, AcquireRequest } from './acquire-sync.js';
import type { AcquireJob, AcquireReply } from './acquire-worker.js';
import type { SurfaceFsImplementation, SurfaceFsKind } from './surface-fs-choice.js';

/**
 * One bounded pool of acquisition threads per process, shared by every LocalFileSurfaceSource and every
 * attempt: at most one worker per core, each running one acquisition at a time, the rest queued in
 * submission order. A campaign of thousands of attempts therefore holds as many threads (and V8
 * isolates) as the machine has cores, not one per source. Workers are released (unref'd) whenever they
 * have nothing to do, so a script exits on its own, and terminated after a minute of idleness, so a
 * long-lived process gives their memory back.
 */

export interface PoolJob {
  request: AcquireRequest;
  surfaceFs: SurfaceFsKind;
  /** Int32Array over this buffer; non-zero means cancelled. The worker checks it at every entry and chunk. */
  cancel: SharedArrayBuffer;
}

export interface PoolCallbacks {
  /** A batch of entries (manifest entries in manifest mode), posted while the walk runs (not yet validated). */
  onEntries(entries: SurfaceEntry[] | ManifestEntry[]): void;
  /** `implementation` is absent for a job cancelled before it started. */
  onDone(outcome: AcquireOutcome, implementation?: SurfaceFsImplementation): void;
  onFailure(error: Error): void;
}

export interface PoolTicket {
  /** Removes a job that has not started; raises the cancellation flag of one that has. */
  cancel(): void;
}

/** Threads per process: one per core the process may use. */
export const POOL_SIZE = Math.max(1, os.availableParallelism());
/** A worker idle this long is terminated (its isolate's memory returns to the system). */
const IDLE_TERMINATE_MS = 60_000;

interface Queued {
  id: number;
  job: PoolJob;
  callbacks: PoolCallbacks;
}

interface Slot {
  worker: Worker;
  running: Queued | undefined;
  idleTimer: NodeJS.Timeout | undefined;
}

class AcquisitionPool {
  readonly #slots = new Set<Slot>();
  readonly #queue: Queued[] = [];
  #nextId = 1;

  submit(job: PoolJob, callbacks: PoolCallbacks): PoolTicket {
    const queued: Queued = { id: this.#nextId++, job, callbacks };
    this.#queue.push(queued);
    this.#dispatch();
    return {
      cancel: () => {
        const at = this.#queue.indexOf(queued);
        if (at >= 0) {
          // Never started: nothing was opened, so it is simply answered as cancelled.
          this.#queue.splice(at, 1);
          callbacks.onDone({ kind: 'cancelled' });
          return;
        }
        Atomics.store(new Int32Array(job.cancel), 0, 1);
      },
    };
  }

  /** Threads alive now (for tests and the bench). */
  get threads(): number {
    return this.#slots.size;
  }

  /** Terminates every idle worker now; running acquisitions are left to finish. */
  async releaseIdle(): Promise<void> {
    const idle = [...this.#slots].filter((slot) => slot.running === undefined);
    for (const slot of idle) this.#remove(slot);
    await Promise.all(idle.map((slot) => slot.worker.terminate()));
  }

  #dispatch(): void {
    while (this.#queue.length > 0) {
      let slot = [...this.#slots].find((candidate) => candidate.running === undefined);
      if (slot === undefined) {
        if (this.#slots.size >= POOL_SIZE) return;
        slot = this.#spawn();
      }
      const next = this.#queue.shift() as Queued;
      this.#start(slot, next);
    }
  }

  #start(slot: Slot, queued: Queued): void {
    if (slot.idleTimer !== undefined) clearTimeout(slot.idleTimer);
    slot.idleTimer = undefined;
    slot.running = queued;
    slot.worker.ref();
    const message: AcquireJob = {
      id: queued.id,
      request: queued.job.request,
      cancel: queued.job.cancel,
      surfaceFs: queued.job.surfaceFs,
    };
    slot.worker.postMessage(message);
  }

  #spawn(): Slot {
    const worker = new Worker(new URL('./acquire-worker.js', import.meta.url));
    const slot: Slot = { worker, running: undefined, idleTimer: undefined };
    worker.on('message', (reply: AcquireReply) => {
      const running = slot.running;
      if (running === undefined || running.id !== reply.id) return;
      if ('entries' in reply) {
        running.callbacks.onEntries(reply.entries);
        return;
      }
      this.#finish(slot);
      if ('outcome' in reply) running.callbacks.onDone(reply.outcome, reply.implementation);
      else {
        running.callbacks.onFailure(
          Object.assign(new Error(reply.failure.message), { name: reply.failure.name }),
        );
      }
    });
    const lost = (error: Error) => {
      if (!this.#slots.has(slot)) return;
      this.#remove(slot);
      slot.running?.callbacks.onFailure(error);
      slot.running = undefined;
      this.#dispatch();
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`the acquisition worker exited (code ${code})`)));
    this.#slots.add(slot);
    return slot;
  }

  #finish(slot: Slot): void {
    slot.running = undefined;
    this.#dispatch();
    if (slot.running !== undefined) return;
    // Nothing queued for it: it must not keep the process alive, and after a while it goes away.
    slot.worker.unref();
    slot.idleTimer = setTimeout(() => {
      if (slot.running !== undefined || !this.#slots.has(slot)) return;
      this.#remove(slot);
      void slot.worker.terminate();
    }, IDLE_TERMINATE_MS);
    slot.idleTimer.unref();
  }

  #remove(slot: Slot): void {
    if (slot.idleTimer !== undefined) clearTimeout(slot.idleTimer);
    slot.idleTimer = undefined;
    this.#slots.delete(slot);
  }
}

/** The process's pool (one per thread that uses sources; in practice the main thread). */
export const acquisitionPool = new AcquisitionPool();
