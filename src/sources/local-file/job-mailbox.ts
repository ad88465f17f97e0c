/**
 * A pool thread's mailbox: after each acquisition a pool thread stays awake for a short while (`LINGER_MS`),
 * watching one shared cell, and an exact job the pool gives it in that window is written into shared
 * memory instead of being posted. Posting wakes a sleeping thread through its event loop, ≈ 13 µs each
 * way on the machines measured, which was the largest single item left in an exact
 * acquisition; a thread that is still awake needs no waking. Its reply is posted as before.
 *
 * The cells (Int32, in one SharedArrayBuffer per thread, given to the thread when it starts):
 * - STATE: IDLE (the thread is in its event loop or busy with a posted job), LINGERING (it watches the
 *   mailbox), CLAIMED (the pool is writing a job), READY (the job is written), RUNNING (the thread runs it).
 *   Only the pool moves LINGERING → CLAIMED → READY, and only the thread moves the others, so a job is
 *   either delivered (the thread is sure to take it) or posted (the mailbox refused it), never both, never lost.
 * - MAIL: the pool posted a message to the thread; a lingering thread stops lingering to receive it.
 * - CANCEL: non-zero cancels the delivered job (the posted jobs keep their own flag). The pool clears it with
 *   each job it delivers, before the job is READY, and raises it only while the thread runs that job.
 * - LENGTH: the job's bytes (JSON of the job, after the cells).
 *
 * Only exact acquisitions are delivered: their job is plain JSON data (strings and whole numbers: JSON gives
 * back exactly the same values), and no port or buffer has to travel with it.
 */

const STATE = 0;
const MAIL = 1;
const CANCEL = 2;
const LENGTH = 3;
const CELLS = 4;

const IDLE = 0;
const LINGERING = 1;
const CLAIMED = 2;
const READY = 3;
const RUNNING = 4;

/** Room for a job's JSON: a root and a uri of a few KiB each. A longer job is posted. */
const JOB_BYTES = 16 * 1024;

/**
 * How long a thread stays awake after a job. Long enough for the caller to receive the reply and ask
 * again (≈ 50–100 µs when acquisitions follow one another), short enough that a thread with nothing more
 * to do gives its core back at once: at most this much CPU per job is spent waiting. A thread lingers only
 * after a job that itself came within this long of its previous reply (acquire-worker.ts): a caller whose
 * acquisitions are spaced out further never pays for it. A process with a single core gets no mailbox at all
 * (acquisition-pool.ts): there the lingering thread would only take the core from the thread about to ask.
 */
export const LINGER_MS = 0.25;

export function createMailboxBuffer(): SharedArrayBuffer {
  return new SharedArrayBuffer(CELLS * 4 + JOB_BYTES);
}

/** The pool's side of one thread's mailbox. */
export class JobMailbox {
  readonly #cells: Int32Array;
  readonly #bytes: Buffer;
  /** Jobs this mailbox took (tests and the bench; not evidence). */
  delivered = 0;

  constructor(buffer: SharedArrayBuffer) {
    this.#cells = new Int32Array(buffer, 0, CELLS);
    this.#bytes = Buffer.from(buffer, CELLS * 4, JOB_BYTES);
  }

  /**
   * Gives `job` to the thread if it is lingering; false when it is not (post the job instead, after
   * `mail`). The job is encoded before the thread is claimed, so nothing can fail between the claim and
   * READY (a thread claimed and never given its job would wait for it forever).
   */
  deliver(job: object): boolean {
    let text: string | undefined;
    try {
      text = JSON.stringify(job);
    } catch {
      // Not plain data (a BigInt, a cycle): posted instead, where the structured clone decides.
      return false;
    }
    if (typeof text !== 'string') return false;
    // A UTF-8 encoding takes at most three bytes per UTF-16 unit.
    if (text.length * 3 > JOB_BYTES) return false;
    if (Atomics.compareExchange(this.#cells, STATE, LINGERING, CLAIMED) !== LINGERING) return false;
    const length = this.#bytes.write(text, 0);
    Atomics.store(this.#cells, CANCEL, 0);
    Atomics.store(this.#cells, LENGTH, length);
    Atomics.store(this.#cells, STATE, READY);
    this.delivered++;
    return true;
  }

  /** Says a message is on its way, so that a lingering thread goes back to its event loop for it. */
  mail(): void {
    Atomics.store(this.#cells, MAIL, 1);
  }

  /** Cancels the delivered job the thread is running (the caller checks that it still runs it). */
  cancel(): void {
    Atomics.store(this.#cells, CANCEL, 1);
  }
}

/** The thread's side of its mailbox. */
export class MailboxWatch {
  readonly #cells: Int32Array;
  readonly #bytes: Buffer;

  constructor(buffer: SharedArrayBuffer) {
    this.#cells = new Int32Array(buffer, 0, CELLS);
    this.#bytes = Buffer.from(buffer, CELLS * 4, JOB_BYTES);
  }

  /** A message is being handled: the mail that announced it has arrived. */
  received(): void {
    Atomics.store(this.#cells, MAIL, 0);
  }

  /** The delivered job's cancellation flag, as the walk checks it. */
  readonly cancelled = (): boolean => Atomics.load(this.#cells, CANCEL) !== 0;

  /**
   * Posts `reply` with the mailbox already open, then watches it for `lingerMs`, running each job delivered
   * meanwhile with `run` and posting its reply the same way, and returns when no job came in time or a
   * message was posted. The mailbox opens before the reply leaves: the pool may deliver as soon as it has the
   * reply, and a thread that opened it only afterwards was often still inside its own `postMessage` by
   * then. `run` must not throw (it answers failures itself), or the mailbox would stay RUNNING and refuse
   * every later job (they would be posted instead).
   */
  linger<Reply>(
    reply: Reply,
    post: (reply: Reply) => void,
    run: (job: unknown) => Reply,
    lingerMs: number,
  ): void {
    const cells = this.#cells;
    let answer = reply;
    for (;;) {
      Atomics.store(cells, STATE, LINGERING);
      post(answer);
      const until = performance.now() + lingerMs;
      for (;;) {
        const state = Atomics.load(cells, STATE);
        if (state === READY) break;
        // CLAIMED: the pool is writing a job, READY follows at once.
        if (state !== LINGERING) continue;
        if (Atomics.load(cells, MAIL) === 0 && performance.now() < until) continue;
        if (Atomics.compareExchange(cells, STATE, LINGERING, IDLE) === LINGERING) return;
      }
      const job: unknown = JSON.parse(this.#bytes.toString('utf8', 0, Atomics.load(cells, LENGTH)));
      Atomics.store(cells, STATE, RUNNING);
      answer = run(job);
    }
  }
}
