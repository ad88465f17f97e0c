import os from 'node:os';
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import type { SurfaceFsImplementation, SurfaceFsKind } from '../confined-fs/surface-fs-choice.js';
import type { AcquireOutcome, AcquireRequest } from './acquire-sync.js';
import type { AcquireJob, AcquireReply, AcquireWorkerData, HelpJob, MailboxJob } from './acquire-worker.js';
import { createMailboxBuffer, JobMailbox } from './job-mailbox.js';
import type { PackedManifestEntries, PackedSurfaceEntries } from './packed-entries.js';
import { LINK, LINK_INTS } from './reader-link.js';

/**
 * One bounded pool of acquisition threads per process, shared by every LocalFileSurfaceSource and every
 * attempt: at most one worker per core, each running one acquisition at a time, the rest queued in
 * submission order. A campaign of thousands of attempts therefore holds as many threads (and V8
 * isolates) as the machine has cores, not one per source. Workers are released (unref'd) whenever they
 * have nothing to do, so a script exits on its own, and terminated after a minute of idleness, so a
 * long-lived process gives their memory back.
 *
 * A glob acquisition (a manifest too) that finds enough files asks for a second reader: when a thread is
 * idle and no job waits, it reads files the walk has opened and checked (read-lanes.ts), and it is handed
 * back as soon as another job queues. Whether a second reader came, and when, changes nothing in the
 * result.
 */

export interface PoolJob {
  request: AcquireRequest;
  surfaceFs: SurfaceFsKind;
  /**
   * Int32Array over this buffer; non-zero means cancelled. The worker checks it at every entry and chunk.
   * Raise it through the ticket (`PoolTicket.cancel`), which also reaches a job given through a thread's
   * mailbox; a job submitted with it already raised is posted, never delivered.
   */
  cancel: SharedArrayBuffer;
  /** 1: never a second reader thread (default 2: one when the walk asks and a thread is free). */
  readers?: 1 | 2;
  /** Test seam: the second reader waits this long before each file (results must not change). */
  helperDelayMs?: number;
}

export interface PoolCallbacks {
  /**
   * A batch streamed while the walk runs, not yet validated: a glob's packed (packed-entries.ts), a
   * manifest's as entry objects.
   */
  onEntries(entries: PackedSurfaceEntries | PackedManifestEntries): void;
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
/**
 * The young generation of each pool thread, in MiB, unless the process sets another
 * ({@link AcquisitionPool.setThreadYoungGenerationMb}). A large acquisition allocates every entry's text on
 * its threads: with 6 MiB they spent about a fifth of their time in scavenges, and 12 or 16 MiB took
 * ≈ 18 % off the CPU of a 100,000-file acquisition. The cost is resident memory
 * that a thread keeps once V8 has grown its young generation to the cap.
 */
export const DEFAULT_THREAD_YOUNG_GENERATION_MB = 16;
/**
 * What a campaign process sets (`witness run`, `witness worker`): two 2 MiB semi-spaces and their
 * large-object share. Left to a larger cap, V8 grows it once a long campaign's steady trickle of surviving
 * objects makes the survival rate look high, a step of ~8–20 MiB across two threads that a campaign of
 * 1,600 attempts takes and one of 100 does not. The old generation is not capped.
 */
export const CAMPAIGN_THREAD_YOUNG_GENERATION_MB = 6;
/** A worker idle this long is terminated (its isolate's memory returns to the system). */
const IDLE_TERMINATE_MS = 60_000;

interface Queued {
  id: number;
  job: PoolJob;
  callbacks: PoolCallbacks;
  /** The pool's end of the link to a second reader (glob acquisitions and manifests). */
  link?: { port: MessagePort; state: SharedArrayBuffer };
  /** The walker asked for a second reader and none has been started yet. */
  wantsHelper: boolean;
  /** A second reader was started for this job (the pool's end of the link went to it). */
  helperStarted: boolean;
  /** A second reader is running for this job and may still owe entries. */
  helperRunning: boolean;
  /** The walker's answer, held until the second reader has delivered its last entries. */
  held?: () => void;
  /** onDone or onFailure was called: later messages for this job are dropped. */
  settled: boolean;
  /** The slot whose mailbox this job was delivered through (job-mailbox.ts); absent for a posted job. */
  deliveredAt?: Slot;
}

interface Run {
  id: number;
  queued: Queued;
  role: 'walker' | 'helper';
}

interface Slot {
  worker: Worker;
  /**
   * The thread's mailbox: exact jobs are delivered there while it lingers after a job. None with a single core,
   * where a lingering thread would only take the core from the thread that is about to ask.
   */
  mailbox: JobMailbox | undefined;
  running: Run | undefined;
  idleTimer: NodeJS.Timeout | undefined;
  /** Started by `prewarm` and still probing: kept referenced until its `probed` message. */
  warming?: boolean;
}

class AcquisitionPool {
  readonly #slots = new Set<Slot>();
  readonly #queue: Queued[] = [];
  #nextId = 1;
  #youngGenerationMb = DEFAULT_THREAD_YOUNG_GENERATION_MB;
  #manifestsShareReaders = true;
  /** jobs delivered through the mailboxes of threads since removed (`mailboxJobs`). */
  #deliveredByGone = 0;

  /**
   * The young generation (MiB) of the threads started from now on; threads already running keep theirs
   * (V8 sizes a thread's heap when it starts). Called by a process before its first acquisition.
   */
  setThreadYoungGenerationMb(mb: number): void {
    if (!Number.isInteger(mb) || mb < 1 || mb > 1024) {
      throw new RangeError(`a thread's young generation must be 1–1024 MiB (got ${mb})`);
    }
    this.#youngGenerationMb = mb;
  }

  /**
   * Whether a manifest job may take a second reader thread, as a glob job does (default true). A campaign
   * process turns it off: its attempts already keep both threads busy, and a manifest read by two threads
   * raised a 1,600-attempt campaign's peak by ≈ 20 MiB. Evidence is the same
   * either way (manifest-two-readers.test.ts).
   */
  setManifestsShareReaders(share: boolean): void {
    this.#manifestsShareReaders = share;
  }

  submit(job: PoolJob, callbacks: PoolCallbacks): PoolTicket {
    const queued: Queued = {
      id: this.#nextId++,
      job,
      callbacks,
      wantsHelper: false,
      helperStarted: false,
      helperRunning: false,
      settled: false,
    };
    this.#queue.push(queued);
    this.#dispatch();
    return {
      cancel: () => {
        const at = this.#queue.indexOf(queued);
        if (at >= 0) {
          // Never started: nothing was opened, so it is simply answered as cancelled.
          this.#queue.splice(at, 1);
          queued.settled = true;
          callbacks.onDone({ kind: 'cancelled' });
          return;
        }
        Atomics.store(new Int32Array(job.cancel), 0, 1);
        // A delivered job reads the mailbox's flag, which belongs to whatever job the thread runs now: raised
        // only while that is still this one.
        const slot = queued.deliveredAt;
        if (slot !== undefined && slot.running?.queued === queued) slot.mailbox?.cancel();
      },
    };
  }

  /** Threads alive now (for tests and the bench). */
  get threads(): number {
    return this.#slots.size;
  }

  /**
   * True when no job is queued or running and no thread is still probing (`prewarm`): every thread alive
   * is parked, waiting for a message, or lingering in JavaScript for its mailbox (job-mailbox.ts). A process may
   * then end at once (`process.exit`) without terminating a thread inside koffi's native code, which
   * aborts the process (acquire-worker.ts).
   */
  get idle(): boolean {
    if (this.#queue.length > 0) return false;
    for (const slot of this.#slots) if (slot.running !== undefined || slot.warming === true) return false;
    return true;
  }

  /** Terminates every idle worker now; running acquisitions are left to finish. */
  async releaseIdle(): Promise<void> {
    const idle = [...this.#slots].filter((slot) => slot.running === undefined);
    for (const slot of idle) this.#remove(slot);
    await Promise.all(idle.map((slot) => slot.worker.terminate()));
  }

  #dispatch(): void {
    while (this.#queue.length > 0) {
      if (this.#ringFree(this.#queue[0] as Queued)) {
        this.#queue.shift();
        continue;
      }
      const slot = this.#freeSlot();
      if (slot === undefined) {
        // A job waits: every second reader goes back to the pool as soon as its walker sees this.
        for (const busy of this.#slots) {
          if (busy.running?.role === 'helper' && busy.running.queued.link !== undefined) {
            const state = new Int32Array(busy.running.queued.link.state);
            Atomics.store(state, LINK.yield, 1);
          }
        }
        return;
      }
      const next = this.#queue.shift() as Queued;
      this.#start(slot, next);
    }
    // Nothing waits: idle threads may become second readers of walks that asked for one.
    for (const busy of [...this.#slots]) {
      const queued = busy.running?.role === 'walker' ? busy.running.queued : undefined;
      if (queued === undefined || !queued.wantsHelper || queued.link === undefined) continue;
      const slot = this.#freeSlot();
      if (slot === undefined) return;
      this.#startHelper(slot, queued);
    }
  }

  #freeSlot(): Slot | undefined {
    for (const slot of this.#slots) if (slot.running === undefined) return slot;
    return this.#slots.size < POOL_SIZE ? this.#spawn() : undefined;
  }

  #start(slot: Slot, queued: Queued): void {
    this.#occupy(slot, { id: queued.id, queued, role: 'walker' });
    const { request } = queued.job;
    const helped =
      POOL_SIZE > 1 &&
      (queued.job.readers ?? 2) === 2 &&
      request.match === 'glob' &&
      (request.mode !== 'manifest' || this.#manifestsShareReaders);
    let helper: AcquireJob['helper'];
    if (helped) {
      const channel = new MessageChannel();
      const state = new SharedArrayBuffer(LINK_INTS * 4);
      queued.link = { port: channel.port2, state };
      helper = { port: channel.port1, state };
    }
    const message: AcquireJob = {
      kind: 'acquire',
      id: queued.id,
      request,
      cancel: queued.job.cancel,
      surfaceFs: queued.job.surfaceFs,
      ...(helper === undefined ? {} : { helper }),
    };
    this.#post(slot, message, helper === undefined ? [] : [helper.port]);
  }

  /**
   * Gives an exact job to whichever free thread is lingering (job-mailbox.ts), if one is: true when one took
   * it. Any free thread's mailbox is tried, not only the first free thread's, so a job never wakes a sleeping
   * thread while another one is awake and waiting. A job whose own flag is already raised is posted (a
   * delivered job reads only the mailbox's flag).
   */
  #ringFree(queued: Queued): boolean {
    const { request } = queued.job;
    if (request.match !== 'exact' || request.mode === 'manifest') return false;
    if (Atomics.load(new Int32Array(queued.job.cancel), 0) !== 0) return false;
    const job: MailboxJob = { kind: 'acquire', id: queued.id, request, surfaceFs: queued.job.surfaceFs };
    for (const slot of this.#slots) {
      if (slot.running !== undefined || slot.mailbox?.deliver(job) !== true) continue;
      this.#occupy(slot, { id: queued.id, queued, role: 'walker' });
      queued.deliveredAt = slot;
      return true;
    }
    return false;
  }

  #startHelper(slot: Slot, queued: Queued): void {
    const link = queued.link as { port: MessagePort; state: SharedArrayBuffer };
    queued.wantsHelper = false;
    queued.helperStarted = true;
    queued.helperRunning = true;
    const run: Run = { id: this.#nextId++, queued, role: 'helper' };
    this.#occupy(slot, run);
    const message: HelpJob = {
      kind: 'help',
      id: run.id,
      port: link.port,
      state: link.state,
      cancel: queued.job.cancel,
      maxContentBytes: queued.job.request.limits.maxContentBytes,
      surfaceFs: queued.job.surfaceFs,
      ...(queued.job.request.mode === 'manifest' ? { manifest: true } : {}),
      ...(queued.job.helperDelayMs === undefined ? {} : { delayMs: queued.job.helperDelayMs }),
    };
    this.#post(slot, message, [link.port]);
  }

  /** Posts a job, telling a lingering thread first that a message is on its way (job-mailbox.ts). */
  #post(slot: Slot, message: AcquireJob | HelpJob, transfer: MessagePort[]): void {
    slot.mailbox?.mail();
    slot.worker.postMessage(message, transfer);
  }

  /** @internal Jobs given through the threads' mailboxes instead of posted, for tests and the bench. */
  get mailboxJobs(): number {
    let delivered = 0;
    for (const slot of this.#slots) delivered += slot.mailbox?.delivered ?? 0;
    return delivered + this.#deliveredByGone;
  }

  #occupy(slot: Slot, run: Run): void {
    if (slot.idleTimer !== undefined) clearTimeout(slot.idleTimer);
    slot.idleTimer = undefined;
    slot.running = run;
    slot.worker.ref();
  }

  /** Settles a job once: its walker's answer, after its second reader (if any) has finished. */
  #settle(queued: Queued, settle: () => void): void {
    if (queued.settled) return;
    if (queued.helperRunning) {
      queued.held = settle;
      return;
    }
    queued.settled = true;
    settle();
  }

  #spawn(data: AcquireWorkerData = {}): Slot {
    const mailbox = POOL_SIZE > 1 ? createMailboxBuffer() : undefined;
    const worker = new Worker(new URL('./acquire-worker.js', import.meta.url), {
      resourceLimits: { maxYoungGenerationSizeMb: this.#youngGenerationMb },
      workerData: { ...data, ...(mailbox === undefined ? {} : { mailbox }) } satisfies AcquireWorkerData,
    });
    const slot: Slot = {
      worker,
      mailbox: mailbox === undefined ? undefined : new JobMailbox(mailbox),
      running: undefined,
      idleTimer: undefined,
    };
    worker.on('message', (reply: AcquireReply) => this.#onReply(slot, reply));
    const lost = (error: Error) => this.#lost(slot, error);
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`the acquisition worker exited (code ${code})`)));
    this.#slots.add(slot);
    return slot;
  }

  /** A thread's reply: warmed up, entries, a call for a second reader, its help done, or the job's end. */
  #onReply(slot: Slot, reply: AcquireReply): void {
    if ('probed' in reply) {
      slot.warming = false;
      if (slot.running === undefined && this.#slots.has(slot)) this.#park(slot);
      return;
    }
    const running = slot.running;
    if (running === undefined || running.id !== reply.id) return;
    const { queued } = running;
    if ('entries' in reply) {
      if (!queued.settled) queued.callbacks.onEntries(reply.entries);
      return;
    }
    if ('wantsHelper' in reply) {
      if (!queued.helperStarted && queued.link !== undefined) {
        queued.wantsHelper = true;
        this.#dispatch();
      }
      return;
    }
    if ('helped' in reply) {
      // The second reader has delivered its last entries (same port, in order) and closed its handles.
      queued.helperRunning = false;
      this.#finish(slot);
      const held = queued.held;
      queued.held = undefined;
      if (held !== undefined) this.#settle(queued, held);
      return;
    }
    queued.wantsHelper = false;
    // No second reader ever took the link: the pool's end of it is closed here.
    if (queued.link !== undefined && !queued.helperStarted) queued.link.port.close();
    this.#finish(slot);
    if ('outcome' in reply) {
      const { outcome } = reply;
      // A job settles only once its second reader (if one was started) has answered: then no entry of
      // it arrives late, and no thread is still starting up for a job that is over.
      this.#settle(queued, () => queued.callbacks.onDone(outcome, reply.implementation));
    } else {
      const error = Object.assign(new Error(reply.failure.message), { name: reply.failure.name });
      this.#settle(queued, () => queued.callbacks.onFailure(error));
    }
  }

  /** A thread that failed or exited: its job fails (a walker waiting on its helper stops waiting). */
  #lost(slot: Slot, error: Error): void {
    if (!this.#slots.has(slot)) return;
    this.#remove(slot);
    const running = slot.running;
    slot.running = undefined;
    if (running?.role === 'helper') {
      // The walker may be waiting for batches this thread took: it stops waiting and fails.
      const { queued } = running;
      if (queued.link !== undefined) {
        const state = new Int32Array(queued.link.state);
        Atomics.store(state, LINK.lost, 1);
        Atomics.notify(state, LINK.completed);
      }
      queued.helperRunning = false;
      const held = queued.held;
      queued.held = undefined;
      if (held !== undefined) this.#settle(queued, () => queued.callbacks.onFailure(error));
    } else if (running !== undefined) {
      running.queued.helperRunning = false;
      this.#settle(running.queued, () => running.queued.callbacks.onFailure(error));
    }
    this.#dispatch();
  }

  /** @internal The young generation (MiB) each running thread was started with, for tests. */
  threadYoungGenerationsMb(): number[] {
    return [...this.#slots].map((slot) => slot.worker.resourceLimits?.maxYoungGenerationSizeMb ?? Number.NaN);
  }

  /**
   * Starts one acquisition thread now, if none is alive, so that its start-up (a V8 isolate, the walk's
   * modules, the openat2 seam's probe) overlaps whatever the caller loads before its first acquisition
   * (`witness score`). It keeps the process alive only until it has probed (a thread terminated inside
   * koffi's native code aborts the process: acquire-worker.ts); then it is idle like any other, keeps no
   * process alive and goes away after a minute unused.
   */
  prewarm(): void {
    if (this.#slots.size > 0) return;
    const slot = this.#spawn({ probeAtStart: true });
    slot.warming = true;
  }

  #finish(slot: Slot): void {
    slot.running = undefined;
    this.#dispatch();
    if (slot.running !== undefined) return;
    this.#park(slot);
  }

  #park(slot: Slot): void {
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
    if (this.#slots.has(slot)) this.#deliveredByGone += slot.mailbox?.delivered ?? 0;
    if (slot.idleTimer !== undefined) clearTimeout(slot.idleTimer);
    slot.idleTimer = undefined;
    this.#slots.delete(slot);
  }
}

/** The process's pool (one per thread that uses sources; in practice the main thread). */
export const acquisitionPool = new AcquisitionPool();
