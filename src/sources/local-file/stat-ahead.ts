import { nativeCallError } from '../confined-fs/errno-name.js';
import type { EntryStat } from '../confined-fs/file-stat.js';
import { entryStatOf } from '../confined-fs/statx.js';

/**
 * Stats taken ahead for a reusing manifest walk (SPEC §12, baseline-digests.ts): a final manifest decides
 * each file by the lstat of its name, and when almost every file is reused that statx per name is most
 * of the walk (≈ 40 of ≈ 60 ms per 10,000 files on one thread). So once a directory is listed, its
 * children's names are statted before they are visited, by the walking thread and the acquisition's second
 * reader (read-lanes.ts) together, each with the very call the walk makes: statx of ONE name relative to
 * the directory's handle, AT_SYMLINK_NOFOLLOW. The walk then visits the children in order with these
 * stats, exactly as if it had taken each one itself at that point.
 *
 * The two threads share the names through one {@link StatRequest} in shared memory and claim them one at a
 * time from a shared counter, so neither waits for the other while names are left: a reader that wakes
 * late, or is busy reading files, simply claims fewer (or none). The walker returns only once every name
 * claimed by the reader is answered, so the directory handle is never in use on another thread after it.
 *
 * What the second reader may reach by this is what the walker's own statx reaches: one name, never a
 * path, never following a link, relative to a handle the walker opened, placed inside the root and keeps
 * open until every answer is back. It opens nothing and reads no bytes; a name swapped for a symlink or a
 * directory since the listing is answered as what it now is, and recorded so (never reused: reusing
 * needs a regular file with the baseline's stat key). A stat taken before the walk reaches the child is
 * as good as one taken when it does: a manifest is taken while nothing in the sandbox runs (SPEC §11).
 */

/** A stat taken ahead: the name's lstat, or the error statx raised for it. */
export type StatAhead = EntryStat | Error;

export type StatAt = (dirFd: number, name: Buffer) => EntryStat;

// Header (Int32): the next name to claim, the number of names, the directory handle.
const NEXT = 0;
const COUNT = 1;
const DIR_FD = 2;
const HEADER_INTS = 4;
/** Status of a name: not answered yet (claimed or not). */
const PENDING = 0;
/** Status of a name the reader statted: its six numbers are in `numbers`. */
const TAKEN = -1;
/** Status of a name the reader claimed and gave back (a failure without an errno): the walker stats it. */
const GIVEN_BACK = -2;
// Any positive status is the errno statx failed with.
const NUMBERS = 6;

/** How long the walker spins for the reader's last answer before it sleeps (one statx is ≈ 2–5 µs). */
const SPIN_MS = 0.05;
/** How long one sleep lasts before the reader thread's liveness is looked at again. */
const WAIT_SLICE_MS = 50;

/**
 * One directory's names and their answers in one SharedArrayBuffer (a fresh one per directory, so a
 * reader that takes a request late can only find every name claimed): the header, a status per name,
 * six numbers per name (dev, ino, size, mode, mtimeMs, ctimeMs), the names' ends and bytes.
 */
export class StatRequest {
  readonly shared: SharedArrayBuffer;
  readonly #header: Int32Array;
  readonly #status: Int32Array;
  readonly #numbers: Float64Array;
  readonly #ends: Int32Array;
  readonly #bytes: Buffer;

  private constructor(shared: SharedArrayBuffer, count: number) {
    this.shared = shared;
    const numbersAt = align8((HEADER_INTS + count) * 4);
    const endsAt = numbersAt + count * NUMBERS * 8;
    const bytesAt = endsAt + count * 4;
    this.#header = new Int32Array(shared, 0, HEADER_INTS);
    this.#status = new Int32Array(shared, HEADER_INTS * 4, count);
    this.#numbers = new Float64Array(shared, numbersAt, count * NUMBERS);
    this.#ends = new Int32Array(shared, endsAt, count);
    this.#bytes = Buffer.from(shared, bytesAt);
  }

  /** The walker's side: a request for `names` in `dirFd`, every name unclaimed. */
  static create(dirFd: number, names: readonly Buffer[]): StatRequest {
    const count = names.length;
    let total = 0;
    for (const name of names) total += name.length;
    const size = align8((HEADER_INTS + count) * 4) + count * NUMBERS * 8 + count * 4 + total;
    const request = new StatRequest(new SharedArrayBuffer(size), count);
    let at = 0;
    for (let i = 0; i < count; i++) {
      const name = names[i] as Buffer;
      name.copy(request.#bytes, at);
      at += name.length;
      request.#ends[i] = at;
    }
    request.#header[COUNT] = count;
    request.#header[DIR_FD] = dirFd;
    // Published by the message that carries it (postMessage orders these writes before the reader's reads).
    return request;
  }

  /** The reader's side: the request the walker shared. */
  static of(shared: SharedArrayBuffer): StatRequest {
    return new StatRequest(shared, new Int32Array(shared, 0, HEADER_INTS)[COUNT] as number);
  }

  get count(): number {
    return this.#status.length;
  }

  /** The next unclaimed name's index, now claimed by the caller, or -1 when none is left. */
  claim(): number {
    const i = Atomics.add(this.#header, NEXT, 1);
    return i < this.count ? i : -1;
  }

  /**
   * The reader's side: claims names one at a time and answers each with `statAt`, until none is left or
   * `cancelled()` (the walker then stats the rest itself). Returns how many it answered.
   */
  serve(statAt: StatAt, cancelled: () => boolean): number {
    const dirFd = this.#header[DIR_FD] as number;
    let answered = 0;
    while (!cancelled()) {
      const i = this.claim();
      if (i < 0) break;
      let status: number;
      try {
        const stat = statAt(dirFd, this.#name(i));
        const o = i * NUMBERS;
        const numbers = this.#numbers;
        numbers[o] = stat.dev;
        numbers[o + 1] = stat.ino;
        numbers[o + 2] = stat.size;
        numbers[o + 3] = stat.mode;
        numbers[o + 4] = stat.mtimeMs;
        numbers[o + 5] = stat.ctimeMs;
        status = TAKEN;
      } catch (error) {
        // nativeCallError's errno is negative, as Node's own errors' are.
        const errno = (error as { errno?: unknown }).errno;
        status = typeof errno === 'number' && Number.isInteger(errno) && errno < 0 ? -errno : GIVEN_BACK;
      }
      // Stored after the numbers (Atomics are sequentially consistent): a walker that sees the status sees them.
      Atomics.store(this.#status, i, status);
      Atomics.notify(this.#status, i);
      answered++;
    }
    return answered;
  }

  /**
   * The walker's side: stats every name it can claim itself, then waits for the reader's answers to the
   * names the reader claimed; a name the reader gave back, or claimed and never answered because its thread
   * was lost (`lost()`), is statted here. Returns the answers in the names' order and how many the reader
   * gave. `checkCancelled` is called before each claim; once it throws, no name is claimed any more by
   * either thread, and its error is rethrown — a cancelled walk stops at once, whatever the directory's
   * size. Either way this returns (or throws) only when no name is claimed and unanswered by a live
   * reader, so the directory handle is then in use by no other thread.
   */
  collect(
    statAt: StatAt,
    lost: () => boolean,
    checkCancelled: () => void,
  ): { answers: StatAhead[]; byReader: number } {
    const dirFd = this.#header[DIR_FD] as number;
    const count = this.count;
    const answers: (StatAhead | undefined)[] = new Array(count);
    for (;;) {
      try {
        checkCancelled();
      } catch (error) {
        // Closes the request (every later claim finds nothing), then waits for the names the reader
        // claimed before that.
        const claimed = Math.min(Atomics.add(this.#header, NEXT, count), count);
        for (let i = 0; i < claimed; i++) if (answers[i] === undefined) this.#awaitStatus(i, lost);
        throw error;
      }
      const i = this.claim();
      if (i < 0) break;
      answers[i] = statHere(statAt, dirFd, this.#name(i));
    }
    let byReader = 0;
    for (let i = 0; i < count; i++) {
      if (answers[i] !== undefined) continue;
      const status = this.#awaitStatus(i, lost);
      if (status === TAKEN) {
        const o = i * NUMBERS;
        const n = this.#numbers;
        answers[i] = entryStatOf(
          n[o] as number,
          n[o + 1] as number,
          n[o + 2] as number,
          n[o + 3] as number,
          n[o + 4] as number,
          n[o + 5] as number,
        );
        byReader++;
      } else if (status > 0) {
        answers[i] = nativeCallError('statx', status);
        byReader++;
      } else answers[i] = statHere(statAt, dirFd, this.#name(i));
    }
    return { answers: answers as StatAhead[], byReader };
  }

  /** The status of name `i` once the reader answered it, or PENDING if the reader's thread was lost. */
  #awaitStatus(i: number, lost: () => boolean): number {
    let status = Atomics.load(this.#status, i);
    if (status !== PENDING) return status;
    const until = performance.now() + SPIN_MS;
    while (performance.now() < until) {
      status = Atomics.load(this.#status, i);
      if (status !== PENDING) return status;
    }
    for (;;) {
      status = Atomics.load(this.#status, i);
      if (status !== PENDING || lost()) return status;
      Atomics.wait(this.#status, i, PENDING, WAIT_SLICE_MS);
    }
  }

  #name(i: number): Buffer {
    return this.#bytes.subarray(i === 0 ? 0 : (this.#ends[i - 1] as number), this.#ends[i] as number);
  }
}

function align8(bytes: number): number {
  return (bytes + 7) & ~7;
}

/** The stat this thread takes of `name` itself, as a StatAhead (a failure kept, not thrown). */
export function statHere(statAt: StatAt, dirFd: number, name: Buffer): StatAhead {
  try {
    return statAt(dirFd, name);
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}
