import { AcquisitionCancelled, rethrowCancelled } from './acquisition-state.js';
import { type CandidateRef, type CheckContext, checkCandidate } from './confined-read.js';
import type { ReadTask } from './reserved-read.js';

/**
 * The acquisition's budget of bytes (maxReadBytes), reserved strictly in enumeration order although two
 * threads check candidates (read-lanes.ts). `next` is the sequence number whose turn it is: the thread
 * holding candidate `seq` reserves `min(size, maxReadBytes - reserved)` for it (0 for a candidate that
 * failed its checks) only when `next === seq`, then lets `seq + 1` go. So the files the budget covers,
 * and the file it cuts, are those a single thread reading in enumeration order would give, whatever the
 * timing. `stopped` is raised by the walking thread when it abandons the acquisition for any reason, so
 * the other thread never waits for a turn that will not come.
 *
 * `reserved` is written only by the thread holding the turn, before it passes the turn on with an atomic
 * store, and read only after an atomic load that saw the turn: the atomics order the accesses.
 */
export interface ReadTicket {
  ints: Int32Array<SharedArrayBuffer>;
  reserved: Float64Array<SharedArrayBuffer>;
  maxReadBytes: number;
}
const TICKET = { next: 0, stopped: 1 } as const;

export function createTicket(maxReadBytes: number): ReadTicket {
  return {
    ints: new Int32Array(new SharedArrayBuffer(8)),
    reserved: new Float64Array(new SharedArrayBuffer(8)),
    maxReadBytes,
  };
}

export function stopTicket(ticket: ReadTicket): void {
  Atomics.store(ticket.ints, TICKET.stopped, 1);
  Atomics.notify(ticket.ints, TICKET.next);
}

export function ticketStopped(ticket: ReadTicket): boolean {
  return Atomics.load(ticket.ints, TICKET.stopped) !== 0;
}

/** How long one wait for a turn lasts before the flags (cancelled, stopped, lost) are looked at again. */
const WAIT_SLICE_MS = 50;

/**
 * Checks a batch of candidates (confined-read.ts `checkCandidate`; no turn is needed for that: a check
 * does not depend on the budget). Returns one entry per candidate: the task to read (reservation still
 * 0), or undefined (absent, or a gap already recorded under its seq). If it throws (cancelled), every
 * handle it opened is closed first.
 */
export function checkAll(ctx: CheckContext, refs: readonly CandidateRef[]): (ReadTask | undefined)[] {
  const tasks: (ReadTask | undefined)[] = [];
  try {
    for (const ref of refs) {
      let checked: ReturnType<typeof checkCandidate>;
      try {
        checked = checkCandidate(ctx, ref);
      } catch (error) {
        rethrowCancelled(error);
        // checkCandidate turns I/O errors into gaps itself; anything else still leaves a gap, never a
        // hole, and the candidate still takes its turn (reserving nothing).
        const message = error instanceof Error ? error.message : String(error);
        ctx.gap(ref.seq, { reason: 'read_failed', uri: ref.uri, detail: `check failed (${message})` });
        checked = 'gap';
      }
      tasks.push(
        typeof checked === 'string' ? undefined : { seq: ref.seq, uri: ref.uri, ...checked, reservation: 0 },
      );
    }
  } catch (error) {
    for (const task of tasks) if (task !== undefined) ctx.fs.close(task.pathFd);
    throw error;
  }
  return tasks;
}

/** One thread's checked batch: its candidates' seqs, their tasks, and how many have taken their turn. */
export interface CheckedBatch {
  seqs: number[];
  tasks: (ReadTask | undefined)[];
  reservedCount: number;
}

/**
 * The batches one thread has checked and not yet read, oldest first. Each candidate takes its turn as
 * soon as the turn comes ({@link advance}, called whenever the thread passes by, never waiting), and a
 * batch is read only once all of its candidates have (so every read is within a reservation made in
 * enumeration order). A thread waits for a turn only when it has nothing else to do
 * ({@link takeReady}), and while it waits it keeps taking its own turns: the lowest seq not yet
 * reserved always belongs to a thread that either waits (and takes it) or runs (and takes it the next
 * time it passes by), so the two threads never wait for each other.
 */
export class TurnQueue {
  readonly #ticket: ReadTicket;
  readonly #batches: CheckedBatch[] = [];

  constructor(ticket: ReadTicket) {
    this.#ticket = ticket;
  }

  get length(): number {
    return this.#batches.length;
  }

  push(refs: readonly CandidateRef[], tasks: (ReadTask | undefined)[]): void {
    this.#batches.push({ seqs: refs.map((ref) => ref.seq), tasks, reservedCount: 0 });
    this.advance();
  }

  /** Takes every turn that has come, in order; never waits. */
  advance(): void {
    const { ints, reserved, maxReadBytes } = this.#ticket;
    for (const batch of this.#batches) {
      while (batch.reservedCount < batch.seqs.length) {
        const seq = batch.seqs[batch.reservedCount] as number;
        const turn = Atomics.load(ints, TICKET.next);
        if (turn !== seq) {
          if (turn > seq) throw new Error(`read ticket out of order: turn ${turn} is past candidate ${seq}`);
          return;
        }
        const task = batch.tasks[batch.reservedCount];
        if (task !== undefined) {
          const spent = reserved[0] as number;
          task.reservation = Math.max(0, Math.min(task.size, maxReadBytes - spent));
          reserved[0] = spent + task.reservation;
        }
        batch.reservedCount++;
        Atomics.store(ints, TICKET.next, seq + 1);
        Atomics.notify(ints, TICKET.next);
      }
    }
  }

  /** The oldest batch if every candidate in it has taken its turn (removed from the queue). */
  tryTakeReady(): CheckedBatch | undefined {
    this.advance();
    const oldest = this.#batches[0];
    if (oldest === undefined || oldest.reservedCount < oldest.seqs.length) return undefined;
    return this.#batches.shift();
  }

  /**
   * The oldest batch, waiting for its turns if need be. `onWait` runs before every wait and throws to
   * give up (cancelled, the other thread lost); a stopped ticket gives up with AcquisitionCancelled.
   */
  takeReady(onWait: () => void): CheckedBatch | undefined {
    const { ints } = this.#ticket;
    for (;;) {
      if (this.#batches.length === 0) return undefined;
      const ready = this.tryTakeReady();
      if (ready !== undefined) return ready;
      const turn = Atomics.load(ints, TICKET.next);
      if (ticketStopped(this.#ticket)) throw new AcquisitionCancelled();
      onWait();
      Atomics.wait(ints, TICKET.next, turn, WAIT_SLICE_MS);
    }
  }

  /** Every batch not yet read, removed from the queue (after a stop: their handles are to be closed). */
  takeAll(): CheckedBatch[] {
    return this.#batches.splice(0);
  }
}
