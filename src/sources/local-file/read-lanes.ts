import { type MessagePort, receiveMessageOnPort } from 'node:worker_threads';
import type { CoverageGap } from '../../models/observation.js';
import type { EntryStat } from '../confined-fs/file-stat.js';
import { LINK } from './reader-link.js';
import { type ReadOutcome, type ReadSink, type ReadTask, readTask } from './reserved-read.js';
import { type StatAhead, type StatAt, StatRequest, statHere } from './stat-ahead.js';

/**
 * Where the walk sends each checked candidate (confined-read.ts) to be read: this thread, or a second
 * reader thread sharing the walk. The walk alone lists, opens O_PATH, proves placement, checks the type
 * and reserves each file's share of maxReadBytes in enumeration order; a reader only reopens the handle
 * it is given through /proc/self/fd, checks dev/ino, reads within that reservation, hashes, decodes and
 * builds the entry. O_PATH handles are opened and closed by the walk's thread only. So whichever
 * thread reads a file, and whenever, the entries, the budget cuts and the gaps are the same: the gaps
 * are put back in enumeration order by the sequence number each task carries.
 */
export interface ReadLanes {
  /**
   * Takes ownership of `task.pathFd` (closed on this thread once read, or when abandoned). `stat` is the
   * fstat of that handle the walk checked (a manifest's walk keeps it: manifest-reads.ts).
   */
  submit(task: ReadTask, stat?: EntryStat): ReadOutcome;
  /** Reads what is still queued and waits for the second reader to finish what it took. */
  finish(): void;
  /** After a cancellation or failure: closes every handle not yet read, reads nothing more. */
  abandon(): void;
  /**
   * Lanes with a second reader only: the lstat of each of `names` in `dirFd` (a directory handle the walk
   * holds open), taken now by `statAt`, shared with the second reader when it is idle (stat-ahead.ts).
   * Returns when every answer is in, or throws OperationCancelled once the acquisition is cancelled;
   * either way the handle is then in use by no other thread.
   */
  statAhead?(dirFd: number, names: readonly Buffer[], statAt: StatAt): StatAhead[];
}

/** What the walking thread offers a reader: its own sink, and close. */
export interface LocalReader {
  sink: ReadSink;
  close(fd: number): void;
  /** Closes each handle in the list as `close` does, in fewer system calls where the seam can. */
  closeHandles(fds: readonly number[]): void;
  /** Called once a task was read here (entry or gaps given to the sink), before its handle is closed. */
  settled?(task: ReadTask): void;
}

/** Every candidate is read at once, on the walking thread (exact locators, manifests, one core). */
export function localLanes(reader: LocalReader): ReadLanes {
  // The read handle of the task being read, closed here with its O_PATH handle (they are usually
  // consecutive numbers: one close_range on the openat2 seam instead of two closes).
  let readFd = -1;
  const keepReadFd = (fd: number) => {
    readFd = fd;
  };
  const both: number[] = [0, 0];
  return {
    submit(task) {
      readFd = -1;
      try {
        const outcome = readTask(reader.sink, task, keepReadFd);
        reader.settled?.(task);
        return outcome;
      } finally {
        if (readFd < 0) reader.close(task.pathFd);
        else {
          both[0] = readFd;
          both[1] = task.pathFd;
          readFd = -1;
          reader.closeHandles(both);
        }
      }
    },
    finish() {},
    abandon() {},
  };
}

// The link's layout lives in reader-link.ts (the pool needs it without loading the readers).
export { LINK, LINK_INTS } from './reader-link.js';

/**
 * Files per batch sent to the helper: few enough to balance, enough to keep messages rare (16 a batch
 * cost the walking thread 10 % of its time in postMessage; 64 a batch, packed, a few per cent).
 */
const BATCH = 64;
/** Files per batch submitted to the second reader (a full batch; the last of an acquisition may be short). */
export const HELPER_BATCH_FILES = BATCH;
/** Batches the helper may hold unfinished: bounds the handles in flight (BATCH × this). */
const MAX_OUTSTANDING = 3;
/** How long one wait for the helper lasts before the flags (cancelled, lost) are looked at again. */
const WAIT_SLICE_MS = 50;

/** Walker → helper. */
export type ToHelper = { tasks: PackedTasks } | { stat: SharedArrayBuffer } | { end: true };

/**
 * A batch of tasks as it crosses threads: six numbers per task in one transferred buffer, and the uris.
 * Cloning an array of task objects cost the walking thread more than any system call it makes per file
 * (profiled: 10 % of its time at 16 tasks a message); a transferred Float64Array and a string array are
 * cheap to send. Every number of a task is an integer far below 2^53, so a double holds it exactly.
 */
export interface PackedTasks {
  numbers: Float64Array<ArrayBuffer>;
  uris: string[];
  /** Each task's `via`, when any task of the batch has one (links are rare: usually absent). */
  vias?: (string | undefined)[];
}
const TASK_FIELDS = 6;

export function packTasks(tasks: readonly ReadTask[]): PackedTasks {
  const numbers = new Float64Array(tasks.length * TASK_FIELDS);
  const uris: string[] = [];
  let vias: (string | undefined)[] | undefined;
  for (let i = 0; i < tasks.length; i++) {
    const task = tasks[i] as ReadTask;
    if (task.via !== undefined) {
      vias ??= new Array(tasks.length);
      vias[i] = task.via;
    }
    const at = i * TASK_FIELDS;
    numbers[at] = task.seq;
    numbers[at + 1] = task.pathFd;
    numbers[at + 2] = task.size;
    numbers[at + 3] = task.dev;
    numbers[at + 4] = task.ino;
    numbers[at + 5] = task.reservation;
    uris.push(task.uri);
  }
  return vias === undefined ? { numbers, uris } : { numbers, uris, vias };
}

export function unpackTasks(packed: PackedTasks): ReadTask[] {
  const { numbers, uris, vias } = packed;
  const tasks: ReadTask[] = [];
  for (let i = 0; i < uris.length; i++) {
    const at = i * TASK_FIELDS;
    const task: ReadTask = {
      seq: numbers[at] as number,
      pathFd: numbers[at + 1] as number,
      uri: uris[i] as string,
      size: numbers[at + 2] as number,
      dev: numbers[at + 3] as number,
      ino: numbers[at + 4] as number,
      reservation: numbers[at + 5] as number,
    };
    const via = vias?.[i];
    if (via !== undefined) task.via = via;
    tasks.push(task);
  }
  return tasks;
}
/** Helper → walker, one per batch, posted before `completed` is raised. */
export interface FromHelper {
  gaps: [seq: number, gap: CoverageGap][];
  bytesRead: number;
  filesRead: number;
  /** The batch's O_PATH handles, read (or, once cancelled, not): the walker closes them. */
  fds: number[];
  /** A manifest's batch: what each task read, for the walker's manifest entries (second-reader.ts). */
  reads?: ManifestReads;
}

/**
 * What a manifest's second reader read, one slot per task it settled (every task of the batch unless
 * cancelled): the task's seq, the entry's size (-1 when the reader made no entry) and its digest (null
 * when the file was cut or not read). The entries themselves never leave the reader: a manifest keeps
 * size and digest only, and its entries are made, in walk order, by the walking thread.
 */
export interface ManifestReads {
  seqs: number[];
  sizes: number[];
  digests: (string | null)[];
}

export interface HelperLink {
  port: MessagePort;
  /** Int32Array of LINK_INTS over a SharedArrayBuffer, shared with the helper and the pool. */
  state: Int32Array;
  /**
   * Asks the pool for a second reader, once the walk has found enough files to be worth one (a glob
   * matching a handful of files never wakes a second thread).
   */
  request(): void;
}

/** Files read on this thread before a second reader is asked for (a glob of a few dozen never asks). */
const REQUEST_AFTER = 32;
/**
 * Names a directory must hold before its stats are shared with the second reader (below it, the message
 * and the wake-up cost about what the stats would).
 */
const STAT_AHEAD_MIN = 16;

/**
 * Lanes with a second reader thread. Candidates queue here in batches; a full batch goes to the helper
 * when it is listening and holds fewer than MAX_OUTSTANDING batches, and is read here otherwise, so the
 * walking thread never waits for the helper while there is work, and never submits it more than a few
 * dozen open handles. The helper posts each batch's gaps and byte count back; they are merged at the end.
 */
export function sharedLanes(
  reader: LocalReader,
  link: HelperLink,
  recordGap: (seq: number, gap: CoverageGap) => void,
  checkCancelled: () => void,
  /** A manifest's walk: receives what the second reader read in each batch it returns. */
  onReads?: (reads: ManifestReads) => void,
): ReadLanes & { readonly helperBatches: number; readonly helperStats: number } {
  let pending: ReadTask[] = [];
  let posted = 0;
  let ended = false;
  let submitted = 0;
  let requested = false;
  /** Names the second reader statted (stat-ahead.ts). */
  let helperStats = 0;
  const request = () => {
    if (requested) return;
    requested = true;
    link.request();
  };
  /** Handles of each batch sent and not yet returned, oldest first (the helper answers in order). */
  const out: number[][] = [];
  const local = localLanes(reader);

  const drain = () => {
    for (;;) {
      const message = receiveMessageOnPort(link.port);
      if (message === undefined) return;
      const result = message.message as FromHelper;
      out.shift();
      reader.closeHandles(result.fds);
      for (const [seq, gap] of result.gaps) recordGap(seq, gap);
      if (result.reads !== undefined) onReads?.(result.reads);
      reader.sink.bytesRead(result.bytesRead);
      for (let i = 0; i < result.filesRead; i++) reader.sink.fileRead();
    }
  };
  /** Waits until the helper has returned every batch; true if it did, false if its thread was lost. */
  const awaitHelper = (onWait: () => void): boolean => {
    while (Atomics.load(link.state, LINK.completed) < posted) {
      if (Atomics.load(link.state, LINK.lost) === 1) {
        // Its thread is gone, and with it every read of these handles: they are closed here.
        drain();
        for (const fds of out.splice(0)) for (const fd of fds) reader.close(fd);
        return false;
      }
      onWait();
      const seen = Atomics.load(link.state, LINK.completed);
      if (seen < posted) Atomics.wait(link.state, LINK.completed, seen, WAIT_SLICE_MS);
    }
    drain();
    return true;
  };
  const helperHasRoom = () =>
    !ended &&
    Atomics.load(link.state, LINK.attached) === 1 &&
    Atomics.load(link.state, LINK.yield) === 0 &&
    Atomics.load(link.state, LINK.lost) === 0 &&
    posted - Atomics.load(link.state, LINK.completed) < MAX_OUTSTANDING;
  /** The helper is there and has nothing of this walk's in hand (so it can take names at once). */
  const helperIdle = () => helperHasRoom() && Atomics.load(link.state, LINK.completed) === posted;
  const end = () => {
    if (ended) return;
    ended = true;
    link.port.postMessage({ end: true } satisfies ToHelper);
  };
  const readHere = (tasks: ReadTask[]) => {
    for (let i = 0; i < tasks.length; i++) {
      try {
        local.submit(tasks[i] as ReadTask);
      } catch (error) {
        // Cancelled (or worse) midway: the handles of the rest are still ours to close.
        for (let j = i + 1; j < tasks.length; j++) reader.close((tasks[j] as ReadTask).pathFd);
        throw error;
      }
    }
  };
  const dispatch = () => {
    const tasks = pending;
    pending = [];
    if (tasks.length === 0) return;
    if (!ended && Atomics.load(link.state, LINK.yield) === 1) end();
    if (helperHasRoom()) {
      // The helper reads these handles and returns them; they are closed here when they come back.
      const packed = packTasks(tasks);
      link.port.postMessage({ tasks: packed } satisfies ToHelper, [packed.numbers.buffer]);
      out.push(tasks.map((task) => task.pathFd));
      posted++;
    } else readHere(tasks);
    drain();
  };

  return {
    submit(task) {
      pending.push(task);
      if (++submitted === REQUEST_AFTER) request();
      if (pending.length >= BATCH) dispatch();
      return 'read';
    },
    finish() {
      const tasks = pending;
      pending = [];
      readHere(tasks);
      end();
      // Internal: the helper thread answers every handle it takes, even on cancellation.
      if (!awaitHelper(checkCancelled)) {
        throw new Error('the second reader thread of this acquisition was lost');
      }
      // A helper that saw the cancellation returned its last handles unread: never answer done without
      // their entries, even when every batch came back before the wait above looked at the flag.
      checkCancelled();
    },
    abandon() {
      for (const task of pending) reader.close(task.pathFd);
      pending = [];
      end();
      // Cancelled (the helper reads no more and returns its handles at once) or failed: either way every
      // handle comes back here and is closed before the acquisition answers.
      awaitHelper(() => {});
    },
    statAhead(dirFd, names, statAt) {
      if (names.length < STAT_AHEAD_MIN) return names.map((name) => statHere(statAt, dirFd, name));
      request();
      if (!ended && Atomics.load(link.state, LINK.yield) === 1) end();
      const lost = () => Atomics.load(link.state, LINK.lost) === 1;
      const stat = StatRequest.create(dirFd, names);
      // The helper claims names as soon as it takes the message. Busy reading a batch, it would take the
      // message only once this thread has claimed every name: it is not sent one. Not attached, gone back
      // to the pool or lost: this thread claims them all.
      if (helperIdle()) link.port.postMessage({ stat: stat.shared } satisfies ToHelper);
      const { answers, byReader } = stat.collect(statAt, lost, checkCancelled);
      helperStats += byReader;
      return answers;
    },
    get helperBatches() {
      return posted;
    },
    get helperStats() {
      return helperStats;
    },
  };
}
