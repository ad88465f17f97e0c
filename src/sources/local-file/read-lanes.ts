import { type MessagePort, receiveMessageOnPort } from 'node:worker_threads';
import type { CoverageGap } from '../../models/observation.js';
import {
  type CandidateRef,
  type CandidateResult,
  type CheckContext,
  checkCandidate,
} from './confined-read.js';
import {
  type CheckedBatch,
  checkAll,
  createTicket,
  type ReadTicket,
  stopTicket,
  TurnQueue,
} from './read-ticket.js';
import { type ReadSink, type ReadTask, readTask } from './reserved-read.js';

/**
 * Where the walk sends each candidate it meets (confined-read.ts): this thread, or a second reader thread
 * sharing the walk. The walk alone lists directories, opens them and decides which names are
 * candidates; whichever thread takes a candidate opens it O_PATH, proves its placement, checks its type
 * (confined-read.ts `checkCandidate`, the same code and the same seam kind on both threads), reserves its
 * share of maxReadBytes through the acquisition's {@link ReadTicket} (strictly in enumeration order,
 * whichever thread gets there first), reads it within that reservation, and closes every handle it
 * opened. So whichever thread reads a file, and whenever, the entries, the budget cuts and the gaps are
 * the same: the gaps are put back in enumeration order by the sequence number each candidate carries.
 *
 * A thread takes candidates in batches and checks and reserves a whole batch before reading any of it
 * (two phases), and the second reader checks every batch it receives as soon as it receives it, even in
 * the middle of reading an earlier one: a thread waiting for the ticket waits only for the other
 * thread's checks, never for its reads. The parent directory's handle of every candidate stays open (the
 * procfs path and a dangling link's lstat reach the name through it) until every candidate in it is
 * done: {@link ReadLanes.releaseDirectory}.
 */
export interface ReadLanes {
  /** Takes a candidate (synchronously read on local lanes: the result is then final). */
  hand(ref: CandidateRef): CandidateResult;
  /** The walk is done with a directory: its handle is closed once no candidate in it is pending. */
  releaseDirectory(fd: number): void;
  /** Reads what is still queued and waits for the second reader to finish what it took. */
  finish(): void;
  /** After a cancellation or failure: reads nothing more, closes every directory still held. */
  abandon(): void;
}

/** What the walking thread offers a reader: its own sink, its checks, its budget, and close. */
export interface LocalReader {
  sink: ReadSink;
  check: CheckContext;
  /** Reserves `min(size, left)` of maxReadBytes for the next candidate in enumeration order. */
  reserve(size: number): number;
  close(fd: number): void;
}

/** Reads one checked candidate within its reservation, then closes its O_PATH handle. */
function readChecked(sink: ReadSink, close: (fd: number) => void, task: ReadTask): void {
  try {
    readTask(sink, task);
  } finally {
    close(task.pathFd);
  }
}

/** Every candidate is read at once, on the walking thread (exact locators, manifests, one core). */
export function localLanes(reader: LocalReader): ReadLanes {
  return {
    hand(ref) {
      const checked = checkCandidate(reader.check, ref);
      if (typeof checked === 'string') return checked;
      const task: ReadTask = {
        seq: ref.seq,
        uri: ref.uri,
        ...checked,
        reservation: reader.reserve(checked.size),
      };
      readChecked(reader.sink, reader.close, task);
      return 'read';
    },
    releaseDirectory(fd) {
      reader.close(fd);
    },
    finish() {},
    abandon() {},
  };
}

/** Index of each Int32 in a link's shared state. */
export const LINK = {
  /** Batches the helper has finished (read and closed, result posted). The walker waits on it. */
  completed: 0,
  /** 1 once the helper thread listens on its port: until then no batch is sent to it. */
  attached: 1,
  /** 1 when the helper's thread was lost: the walker stops waiting and fails the acquisition. */
  lost: 2,
  /** 1 when the pool wants the helper's thread for a queued job: the walker stops sending batches. */
  yield: 3,
} as const;
export const LINK_INTS = 4;

/** How long one wait for the helper lasts before the flags (cancelled, lost) are looked at again. */
const WAIT_SLICE_MS = 50;

/**
 * Candidates per batch: few enough to balance, enough to keep messages rare (16 a batch cost the
 * walking thread 10 % of its time in postMessage; 64 a batch, packed, a few per cent).
 */
const BATCH = 64;
/** Candidates per batch handed to the second reader (a full batch; the last may be short). */
export const HELPER_BATCH_FILES = BATCH;
/** Batches the helper may hold unfinished: bounds the work in flight (BATCH × this). */
const MAX_OUTSTANDING = 3;

/** Walker → helper. The first batch also carries what the helper checks with. */
export type ToHelper =
  | { tasks: PackedRefs; setup?: HelperSetup }
  | {
      end: true;
    };

/** The acquisition, as the second reader needs it to check candidates like the walking thread. */
export interface HelperSetup {
  rootFd: number;
  rootPath: Uint8Array;
  ticket: ReadTicket;
}

/**
 * A batch of candidates as it crosses threads: five numbers per candidate in one transferred buffer,
 * their path bytes in another, and the uris. Cloning an array of objects cost the walking thread more
 * than any system call it makes per file (profiled: 10 % of its time at 16 tasks a message); transferred
 * buffers and a string array are cheap to send. Every number is an integer far below 2^53.
 */
export interface PackedRefs {
  numbers: Float64Array<ArrayBuffer>;
  bytes: Uint8Array<ArrayBuffer>;
  uris: string[];
}
const REF_FIELDS = 5;

export function packRefs(refs: readonly CandidateRef[]): PackedRefs {
  let total = 0;
  for (const ref of refs) total += ref.name.length + (ref.beneath?.length ?? 0);
  const bytes = new Uint8Array(total);
  const numbers = new Float64Array(refs.length * REF_FIELDS);
  const uris: string[] = [];
  let offset = 0;
  for (let i = 0; i < refs.length; i++) {
    const ref = refs[i] as CandidateRef;
    const at = i * REF_FIELDS;
    numbers[at] = ref.seq;
    numbers[at + 1] = ref.dirFd;
    numbers[at + 2] = offset;
    bytes.set(ref.name, offset);
    offset += ref.name.length;
    numbers[at + 3] = offset;
    if (ref.beneath !== undefined) {
      bytes.set(ref.beneath, offset);
      offset += ref.beneath.length;
    }
    numbers[at + 4] = ref.beneath === undefined ? -1 : offset;
    uris.push(ref.uri);
  }
  return { numbers, bytes, uris };
}

export function unpackRefs(packed: PackedRefs): CandidateRef[] {
  const { numbers, uris } = packed;
  const bytes = Buffer.from(packed.bytes.buffer, packed.bytes.byteOffset, packed.bytes.byteLength);
  const refs: CandidateRef[] = [];
  for (let i = 0; i < uris.length; i++) {
    const at = i * REF_FIELDS;
    const nameStart = numbers[at + 2] as number;
    const nameEnd = numbers[at + 3] as number;
    const beneathEnd = numbers[at + 4] as number;
    refs.push({
      seq: numbers[at] as number,
      dirFd: numbers[at + 1] as number,
      name: bytes.subarray(nameStart, nameEnd),
      uri: uris[i] as string,
      beneath: beneathEnd < 0 ? undefined : bytes.subarray(nameEnd, beneathEnd),
    });
  }
  return refs;
}

/** Helper → walker, one per batch, posted before `completed` is raised. */
export interface FromHelper {
  gaps: [seq: number, gap: CoverageGap][];
  bytesRead: number;
  filesRead: number;
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

/** Candidates read on this thread before a second reader is asked for (a glob of a few dozen never asks). */
const REQUEST_AFTER = 32;

/** Checked batches this thread may hold while their turns have not come, before it waits for one. */
const MAX_WAITING_LOCAL = 4;

/**
 * Lanes with a second reader thread. Candidates queue here in batches; a full batch goes to the helper
 * when it is listening and holds fewer than MAX_OUTSTANDING batches, and is checked here otherwise and
 * read here as soon as its turns have come (read-ticket.ts), so the walking thread never waits for the
 * helper's reads, and waits for its checks only when MAX_WAITING_LOCAL checked batches are waiting. The
 * helper posts each batch's gaps and byte count back; they are merged at the end.
 */
export function sharedLanes(
  reader: LocalReader,
  link: HelperLink,
  maxReadBytes: number,
  recordGap: (seq: number, gap: CoverageGap) => void,
  checkCancelled: () => void,
): ReadLanes & { readonly helperBatches: number } {
  const ticket = createTicket(maxReadBytes);
  const local = new TurnQueue(ticket);
  let pending: CandidateRef[] = [];
  let posted = 0;
  let ended = false;
  let handed = 0;
  let setupSent = false;
  /** The parent directories of each batch sent and not yet answered, oldest first (answers come in order). */
  const out: number[][] = [];
  /** The parent directories of each batch checked here and not yet read, oldest first. */
  const localDirs: number[][] = [];
  /** Per directory handle: candidates in it not yet done, and whether the walk has released it. */
  const held = new Map<number, { pending: number; released: boolean }>();

  const doneWith = (dirFd: number) => {
    const entry = held.get(dirFd);
    if (entry === undefined) return;
    entry.pending--;
    if (entry.pending === 0 && entry.released) {
      held.delete(dirFd);
      reader.close(dirFd);
    }
  };
  const drain = () => {
    for (;;) {
      const message = receiveMessageOnPort(link.port);
      if (message === undefined) return;
      const result = message.message as FromHelper;
      for (const dirFd of out.shift() ?? []) doneWith(dirFd);
      for (const [seq, gap] of result.gaps) recordGap(seq, gap);
      reader.sink.bytesRead(result.bytesRead);
      for (let i = 0; i < result.filesRead; i++) reader.sink.fileRead();
    }
  };
  const helperLost = () => Atomics.load(link.state, LINK.lost) === 1;
  /** While this thread waits for a turn: give up if cancelled or if the helper's thread is gone. */
  const onTurnWait = () => {
    checkCancelled();
    if (helperLost()) throw new Error('the second reader thread of this acquisition was lost');
  };
  /** Waits until the helper has returned every batch; true if it did, false if its thread was lost. */
  const awaitHelper = (onWait: () => void): boolean => {
    while (Atomics.load(link.state, LINK.completed) < posted) {
      if (helperLost()) {
        drain();
        for (const dirs of out.splice(0)) for (const dirFd of dirs) doneWith(dirFd);
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
    !helperLost() &&
    posted - Atomics.load(link.state, LINK.completed) < MAX_OUTSTANDING;
  const end = () => {
    if (ended) return;
    ended = true;
    link.port.postMessage({ end: true } satisfies ToHelper);
  };
  /** Reads one checked batch whose turns have all come, closing every handle; its directories are done. */
  const readBatch = (batch: CheckedBatch) => {
    const dirs = localDirs.shift() ?? [];
    const { tasks } = batch;
    try {
      for (let i = 0; i < tasks.length; i++) {
        const task = tasks[i];
        if (task === undefined) continue;
        try {
          readChecked(reader.sink, reader.close, task);
        } catch (error) {
          // Cancelled (or worse) midway: the handles of the rest are still ours to close.
          for (let j = i + 1; j < tasks.length; j++) {
            const rest = tasks[j];
            if (rest !== undefined) reader.close(rest.pathFd);
          }
          throw error;
        }
      }
    } finally {
      for (const dirFd of dirs) doneWith(dirFd);
    }
  };
  /** Reads the local batches whose turns have come; waits for turns while more than `keep` remain. */
  const readLocal = (keep: number, atMostOneReady: boolean) => {
    for (let read = 0; ; read++) {
      const ready =
        local.length > keep
          ? local.takeReady(onTurnWait)
          : atMostOneReady && read > 0
            ? undefined
            : local.tryTakeReady();
      if (ready === undefined) return;
      readBatch(ready);
    }
  };
  const checkHere = (refs: CandidateRef[]) => {
    local.push(refs, checkAll(reader.check, refs));
    localDirs.push(refs.map((ref) => ref.dirFd));
  };
  const dispatch = () => {
    const refs = pending;
    pending = [];
    if (refs.length === 0) return;
    if (!ended && Atomics.load(link.state, LINK.yield) === 1) end();
    if (helperHasRoom()) {
      const packed = packRefs(refs);
      const message: ToHelper = { tasks: packed };
      if (!setupSent) {
        message.setup = { rootFd: reader.check.rootFd, rootPath: reader.check.rootPath, ticket };
        setupSent = true;
      }
      link.port.postMessage(message, [packed.numbers.buffer, packed.bytes.buffer]);
      out.push(refs.map((ref) => ref.dirFd));
      posted++;
    } else checkHere(refs);
    // One local batch per batch handed out at most: reading several at once starves the helper.
    readLocal(MAX_WAITING_LOCAL, true);
    drain();
  };

  return {
    hand(ref) {
      const entry = held.get(ref.dirFd);
      if (entry === undefined) held.set(ref.dirFd, { pending: 1, released: false });
      else entry.pending++;
      pending.push(ref);
      if (++handed === REQUEST_AFTER) link.request();
      if (pending.length >= BATCH) dispatch();
      // The helper may be waiting for a turn of a batch checked here: take it as soon as it comes.
      else if (local.length > 0) local.advance();
      return 'read';
    },
    releaseDirectory(fd) {
      const entry = held.get(fd);
      if (entry === undefined) reader.close(fd);
      else entry.released = true;
    },
    finish() {
      const refs = pending;
      pending = [];
      if (refs.length > 0) checkHere(refs);
      readLocal(0, false);
      end();
      if (!awaitHelper(checkCancelled)) {
        throw new Error('the second reader thread of this acquisition was lost');
      }
      closeReleased();
    },
    abandon() {
      // Nothing pending was opened yet; checked batches are closed unread. The helper is told to stop
      // waiting for turns and to read no more; once it has answered every batch (or is lost), every
      // directory still held is closed.
      stopTicket(ticket);
      for (const batch of local.takeAll()) {
        for (const task of batch.tasks) if (task !== undefined) reader.close(task.pathFd);
        for (const dirFd of localDirs.shift() ?? []) doneWith(dirFd);
      }
      for (const ref of pending) doneWith(ref.dirFd);
      pending = [];
      end();
      awaitHelper(() => {});
      closeReleased();
    },
    get helperBatches() {
      return posted;
    },
  };

  /** Directories released by the walk whose candidates never came back (helper lost): closed now. */
  function closeReleased(): void {
    for (const [fd, entry] of held) {
      if (!entry.released) continue;
      held.delete(fd);
      reader.close(fd);
    }
  }
}
