import { type MessagePort, receiveMessageOnPort } from 'node:worker_threads';
import type { CoverageGap, SurfaceEntry } from '../../models/observation.js';
import { AcquisitionCancelled } from './acquisition-state.js';
import type { CandidateRef, CheckContext } from './confined-read.js';
import {
  checkBatch,
  type FromHelper,
  type HelperSetup,
  LINK,
  type ToHelper,
  ticketStopped,
  unpackRefs,
} from './read-lanes.js';
import { type ReadSink, type ReadTask, readTask, scratchChunk } from './reserved-read.js';
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

interface CheckedBatch {
  /** One per candidate: the task to read, or undefined (nothing to read; any gap already recorded). */
  tasks: (ReadTask | undefined)[];
}

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
  /** Batches checked (their turns taken) and not yet read, oldest first. */
  const queue: CheckedBatch[] = [];
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

  /** Phase one of a batch: check every candidate and take its turn; nothing once stopped. */
  const checkArrived = (refs: CandidateRef[]): CheckedBatch => {
    if (check === undefined || setup === undefined || stopped()) return { tasks: [] };
    try {
      return {
        tasks: checkBatch(check, setup.ticket, refs, () => {
          if (stopped()) throw new AcquisitionCancelled();
        }),
      };
    } catch (error) {
      // Stopped midway (checkBatch closed what it opened); the walker reports the cancellation.
      if (!(error instanceof AcquisitionCancelled)) throw error;
      return { tasks: [] };
    }
  };
  const take = (message: ToHelper) => {
    if (!('tasks' in message)) {
      endSeen = true;
      return;
    }
    if (message.setup !== undefined) {
      setup = message.setup;
      const rootPath = Buffer.from(
        setup.rootPath.buffer,
        setup.rootPath.byteOffset,
        setup.rootPath.byteLength,
      );
      check = { fs: guarded, rootFd: setup.rootFd, rootPath, gap: recordGap };
    }
    queue.push(checkArrived(unpackRefs(message.tasks)));
  };
  const takeArrived = () => {
    for (;;) {
      const arrived = receiveMessageOnPort(port);
      if (arrived === undefined) return;
      take(arrived.message as ToHelper);
    }
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
    const result: FromHelper = { gaps, bytesRead: bytes, filesRead };
    gaps = [];
    bytes = 0;
    filesRead = 0;
    port.postMessage(result);
    // Raised after the result is posted: a walker that sees the count finds the result on its port.
    Atomics.add(link, LINK.completed, 1);
    Atomics.notify(link, LINK.completed);
  };

  const run = () => {
    if (running) return;
    running = true;
    try {
      takeArrived();
      for (;;) {
        const batch = queue.shift();
        if (batch === undefined) break;
        readBatch(batch);
        takeArrived();
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
