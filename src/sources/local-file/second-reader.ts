import { type MessagePort, receiveMessageOnPort } from 'node:worker_threads';
import type { CoverageGap, SurfaceEntry } from '../../models/observation.js';
import { AcquisitionCancelled } from './acquisition-state.js';
import type { CheckContext } from './confined-read.js';
import { type FromHelper, type HelperSetup, LINK, type ToHelper, unpackRefs } from './read-lanes.js';
import { type CheckedBatch, checkAll, TurnQueue, ticketStopped } from './read-ticket.js';
import { type ReadSink, readTask, scratchChunk } from './reserved-read.js';
import type { SurfaceFs } from './surface-fs.js';

/**
 * The second reader thread of one acquisition (read-lanes.ts). It receives batches of candidates the
 * walk has listed (parent handle, name, path beneath the root, uri, sequence number). For each, exactly
 * as the walking thread would (confined-read.ts `checkCandidate`, with this thread's own instance of the
 * walker's seam kind, the acquisition's root handle and root path): it opens the candidate O_PATH
 * (openat2 beneath the root handle, or through the parent's handle and placed by the kernel's path for
 * the handle), checks it is a regular file, reserves its share of maxReadBytes in its turn (the shared
 * ticket: enumeration order, whatever the timing), reopens it through /proc/self/fd (never a name),
 * checks dev/ino, reads within the reservation, and closes both handles itself: a handle is closed by
 * the thread that opened it, so its number cannot be reused under a thread that still holds it, and each
 * seam's per-handle records stay true. It checks (and reserves) each batch as soon as it arrives, even
 * between the files of an earlier batch, so the walking thread never waits for its reads. Once
 * cancelled, or once the walk gave up, it opens and reads nothing more and answers every batch.
 */

export interface SecondReaderOptions {
  port: MessagePort;
  link: Int32Array;
  /** The acquisition's cancellation flag (Int32Array; non-zero means cancelled). */
  cancel: Int32Array;
  /** This thread's instance of the walker's seam kind (procfs if that kind cannot load here). */
  fs: Pick<
    SurfaceFs,
    | 'openPathAt'
    | 'openPathBeneath'
    | 'provenInside'
    | 'handlePath'
    | 'lstatAt'
    | 'reopenForRead'
    | 'fstat'
    | 'read'
    | 'close'
  >;
  maxContentBytes: number;
  /** Streams entries to the caller's thread (same batches as the walking thread's). */
  onEntries(entries: SurfaceEntry[]): void;
  /** Called once, after the walker said it sends nothing more and every batch was answered. */
  onEnd(readsDone: number): void;
  /** Test seam: milliseconds spent before each file (an injected slow reader). */
  delayMs?: number;
}

const ENTRY_BATCH = 1000;

export function serveSecondReader(options: SecondReaderOptions): void {
  const { port, link, cancel } = options;
  const chunk = scratchChunk();
  let setup: HelperSetup | undefined;
  const stopped = () => Atomics.load(cancel, 0) !== 0 || (setup !== undefined && ticketStopped(setup.ticket));
  let entries: SurfaceEntry[] = [];
  let gaps: [number, CoverageGap][] = [];
  let bytes = 0;
  let filesRead = 0;
  let readsDone = 0;
  let finished = false;
  let endSeen = false;
  let running = false;
  /** Batches checked and not yet read, oldest first, taking their turns as they come. */
  let queue: TurnQueue | undefined;
  /** Batches received before any setup (never: the first batch carries it): answered unchecked. */
  let unchecked = 0;
  const sleeper = options.delayMs === undefined ? undefined : new Int32Array(new SharedArrayBuffer(4));
  const guard = <A extends unknown[], R>(call: (...args: A) => R) => {
    return (...args: A): R => {
      if (stopped()) throw new AcquisitionCancelled();
      return call(...args);
    };
  };
  const fs = options.fs;
  const guarded = {
    openPathAt: guard(fs.openPathAt),
    ...(fs.openPathBeneath === undefined ? {} : { openPathBeneath: guard(fs.openPathBeneath) }),
    provenInside: (fd: number) => fs.provenInside(fd),
    handlePath: guard(fs.handlePath),
    lstatAt: guard(fs.lstatAt),
    reopenForRead: guard(fs.reopenForRead),
    fstat: guard(fs.fstat),
    read: guard(fs.read),
    close: (fd: number) => fs.close(fd),
  };
  const recordGap = (seq: number, gap: CoverageGap) => {
    gaps.push([seq, gap]);
  };
  let check: CheckContext | undefined;
  const sink: ReadSink = {
    chunk,
    maxContentBytes: options.maxContentBytes,
    fs: guarded,
    fileRead: () => {
      filesRead++;
    },
    checkCancelled: () => {
      if (stopped()) throw new AcquisitionCancelled();
      // Between chunks of a read: batches that arrived meanwhile are checked now, so the walking
      // thread, if it waits for a turn after them, never waits for this read to end.
      takeArrived();
      queue?.advance();
    },
    gap: recordGap,
    entry: (entry) => {
      entries.push(entry);
      if (entries.length >= ENTRY_BATCH) {
        options.onEntries(entries);
        entries = [];
      }
    },
    bytesRead: (count) => {
      bytes += count;
    },
  };

  const take = (message: ToHelper) => {
    if (!('tasks' in message)) {
      endSeen = true;
      return;
    }
    if (message.setup !== undefined) {
      setup = message.setup;
      const { rootPath } = setup;
      check = {
        fs: guarded,
        rootFd: setup.rootFd,
        rootPath: Buffer.from(rootPath.buffer, rootPath.byteOffset, rootPath.byteLength),
        gap: recordGap,
      };
      queue = new TurnQueue(setup.ticket);
    }
    if (check === undefined || queue === undefined) {
      unchecked++;
      return;
    }
    // Every batch gets one answer, in the order received (the walker matches answers to batches): a
    // batch received once stopped joins the queue empty, checked and read as nothing.
    const refs = stopped() ? [] : unpackRefs(message.tasks);
    let tasks: ReturnType<typeof checkAll>;
    try {
      tasks = checkAll(check, refs);
    } catch (error) {
      // Stopped midway (checkAll closed what it opened); the walker reports the cancellation.
      if (!(error instanceof AcquisitionCancelled)) throw error;
      queue.push([], []);
      return;
    }
    queue.push(refs, tasks);
  };
  const takeArrived = () => {
    for (;;) {
      const arrived = receiveMessageOnPort(port);
      if (arrived === undefined) return;
      take(arrived.message as ToHelper);
    }
  };

  const answer = () => {
    const result: FromHelper = { gaps, bytesRead: bytes, filesRead };
    gaps = [];
    bytes = 0;
    filesRead = 0;
    port.postMessage(result);
    // Raised after the result is posted: a walker that sees the count finds the result on its port.
    Atomics.add(link, LINK.completed, 1);
    Atomics.notify(link, LINK.completed);
  };
  const readBatch = (batch: CheckedBatch) => {
    const { tasks } = batch;
    for (let i = 0; i < tasks.length; i++) {
      const task = tasks[i];
      if (task === undefined) continue;
      try {
        if (!stopped()) {
          if (sleeper !== undefined) Atomics.wait(sleeper, 0, 0, options.delayMs);
          readTask(sink, task);
          readsDone++;
        }
      } catch (error) {
        // Stopped midway: the rest of the batch is closed unread; the walker reports the cancellation.
        // Anything else (readTask turns I/O errors into gaps itself) still leaves a gap, never a hole.
        if (!(error instanceof AcquisitionCancelled)) {
          const message = error instanceof Error ? error.message : String(error);
          gaps.push([task.seq, { reason: 'read_failed', uri: task.uri, detail: `read failed (${message})` }]);
        }
      } finally {
        fs.close(task.pathFd);
      }
    }
    answer();
  };
  /** Stopped: every batch not yet read is answered, its handles closed, nothing read. */
  const answerUnread = () => {
    for (const batch of queue?.takeAll() ?? []) {
      for (const task of batch.tasks) if (task !== undefined) fs.close(task.pathFd);
      answer();
    }
  };
  const onTurnWait = () => {
    if (stopped()) throw new AcquisitionCancelled();
    // Batches that arrive while this thread waits are checked meanwhile.
    takeArrived();
  };

  const run = () => {
    if (running) return;
    running = true;
    try {
      for (;;) {
        takeArrived();
        for (; unchecked > 0; unchecked--) answer();
        let batch: CheckedBatch | undefined;
        try {
          batch = queue?.takeReady(onTurnWait);
        } catch (error) {
          if (!(error instanceof AcquisitionCancelled)) throw error;
          answerUnread();
          continue;
        }
        if (batch === undefined) break;
        readBatch(batch);
      }
    } finally {
      running = false;
    }
    if (endSeen) end();
  };

  const end = () => {
    if (finished) return;
    finished = true;
    if (entries.length > 0) options.onEntries(entries);
    entries = [];
    port.close();
    options.onEnd(readsDone);
  };

  port.on('message', (message: ToHelper) => {
    take(message);
    run();
  });
  // The walker's thread went away without saying so: nothing more will come.
  port.on('close', end);
  Atomics.store(link, LINK.attached, 1);
}
