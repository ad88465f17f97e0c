import type { MessagePort } from 'node:worker_threads';
import type { CoverageGap, SurfaceEntry } from '../../models/observation.js';
import { OperationCancelled } from '../confined-fs/fs-errors.js';
import type { SurfaceFs } from '../confined-fs/surface-fs.js';
import { type PackedSurfaceEntries, SurfaceEntryPacker } from './packed-entries.js';
import { type FromHelper, LINK, type ManifestReads, type ToHelper, unpackTasks } from './read-lanes.js';
import { type ReadSink, type ReadTask, readTask, scratchChunk } from './reserved-read.js';
import { StatRequest } from './stat-ahead.js';

/**
 * The second reader thread of one acquisition (read-lanes.ts). It receives batches of O_PATH handles that
 * the walking thread has already opened, placed inside the root and found to be regular files, each
 * with its reserved share of maxReadBytes. For each it reopens the handle through /proc/self/fd (never a
 * name), checks dev/ino, reads, closes its own read handle, and streams the entries to the caller's
 * thread; each batch's gaps and O_PATH handles go back to the walker, which closes those handles: a
 * handle is closed by the thread that opened it, so its number cannot be reused under a reader that still
 * holds it, and Node's per-thread record of open handles stays true. It opens no name, so it cannot
 * read anything the walk did not prove to be inside the root. The one lookup it makes is for a reusing
 * manifest (stat-ahead.ts): the lstat of single names relative to a directory handle the walker opened,
 * placed and holds open until the answer is back — statx with AT_SYMLINK_NOFOLLOW, the walker's own call,
 * so it learns nothing the walker's statx would not. Once cancelled it reads no more bytes and stats no
 * more names, but still answers every batch and returns every handle.
 */

export interface SecondReaderOptions {
  port: MessagePort;
  link: Int32Array;
  /** The acquisition's cancellation flag (Int32Array; non-zero means cancelled). */
  cancel: Int32Array;
  /**
   * Reopen, fstat, read and close of read handles (the procfs seam's: both seams reopen that way), and
   * the seam's statx of a name, when it has one, for stat batches.
   */
  fs: Pick<SurfaceFs, 'reopenForRead' | 'fstat' | 'read' | 'close' | 'entryStatAt'>;
  maxContentBytes: number;
  /** Streams entries to the caller's thread, packed (same batches as the walking thread's). */
  onEntries(entries: PackedSurfaceEntries): void;
  /** Called once, after the walker said it sends nothing more and every batch was answered. */
  onEnd(readsDone: number): void;
  /**
   * The walk is a manifest's (SPEC §12): files are read for their digest only (no text), and what each
   * task read goes back to the walker with its batch (`FromHelper.reads`), which makes the manifest
   * entries in walk order; nothing is streamed to the caller's thread.
   */
  manifest?: boolean;
  /** Test seam: milliseconds spent before each file (an injected slow reader). */
  delayMs?: number;
}

export function serveSecondReader(options: SecondReaderOptions): void {
  const { port, link, cancel } = options;
  const chunk = scratchChunk();
  const cancelled = () => Atomics.load(cancel, 0) !== 0;
  const entries = new SurfaceEntryPacker((batch) => options.onEntries(batch));
  let gaps: [number, CoverageGap][] = [];
  let bytes = 0;
  let filesRead = 0;
  let readsDone = 0;
  let finished = false;
  const sleeper = options.delayMs === undefined ? undefined : new Int32Array(new SharedArrayBuffer(4));
  const manifest = options.manifest === true;
  /** A manifest's batch: the entry the task being read made, if any (see `reads`). */
  let made: SurfaceEntry | undefined;
  const sink: ReadSink = {
    chunk,
    maxContentBytes: options.maxContentBytes,
    digestOnly: manifest,
    fs: {
      reopenForRead: (pathFd) => {
        if (cancelled()) throw new OperationCancelled();
        return options.fs.reopenForRead(pathFd);
      },
      fstat: (fd) => {
        if (cancelled()) throw new OperationCancelled();
        return options.fs.fstat(fd);
      },
      read: (fd, buffer, length) => {
        if (cancelled()) throw new OperationCancelled();
        return options.fs.read(fd, buffer, length);
      },
      close: (fd) => options.fs.close(fd),
    },
    fileRead: () => {
      filesRead++;
    },
    checkCancelled: () => {
      if (cancelled()) throw new OperationCancelled();
    },
    gap: (seq, gap) => gaps.push([seq, gap]),
    entry: (entry) => {
      if (manifest) {
        made = entry;
        return;
      }
      entries.add(entry);
    },
    // A manifest's reads keep no text (digestOnly): only an observation's entries are packed as bytes.
    ...(manifest
      ? {}
      : {
          asciiEntry: (
            uri: string,
            sizeBytes: number,
            sha256: string,
            modifiedAt: string,
            text: Buffer,
            via: string | undefined,
          ) => entries.addAscii(uri, sizeBytes, sha256, modifiedAt, text, via),
        }),
    bytesRead: (count) => {
      bytes += count;
    },
  };

  const readBatch = (tasks: ReadTask[]) => {
    const reads: ManifestReads | undefined = manifest ? { seqs: [], sizes: [], digests: [] } : undefined;
    for (const task of tasks) {
      made = undefined;
      try {
        if (!cancelled()) {
          if (sleeper !== undefined) Atomics.wait(sleeper, 0, 0, options.delayMs);
          readTask(sink, task);
          readsDone++;
          settle(reads, task.seq);
        }
      } catch (error) {
        // Cancelled midway: the rest of the batch is closed unread; the walker reports the cancellation.
        // Anything else (readTask turns I/O errors into gaps itself) still leaves a gap, never a hole.
        if (!(error instanceof OperationCancelled)) {
          const message = error instanceof Error ? error.message : String(error);
          gaps.push([task.seq, { reason: 'read_failed', uri: task.uri, detail: `read failed (${message})` }]);
          made = undefined;
          settle(reads, task.seq);
        }
      }
    }
    const result: FromHelper = {
      gaps,
      bytesRead: bytes,
      filesRead,
      fds: tasks.map((task) => task.pathFd),
      ...(reads === undefined ? {} : { reads }),
    };
    gaps = [];
    bytes = 0;
    filesRead = 0;
    port.postMessage(result);
    // Raised after the result is posted: a walker that sees the count finds the result on its port.
    Atomics.add(link, LINK.completed, 1);
    Atomics.notify(link, LINK.completed);
  };

  /**
   * A reusing manifest's names, statted for the walker (stat-ahead.ts): the names left unclaimed, one at
   * a time. Nothing is posted back: the answers are in the request's shared memory.
   */
  const statNames = (shared: SharedArrayBuffer) => {
    const statAt = options.fs.entryStatAt;
    if (statAt === undefined) return;
    StatRequest.of(shared).serve((dirFd, name) => statAt.call(options.fs, dirFd, name), cancelled);
  };

  /** A manifest's task is settled: what it read (or that it made no entry) goes back with the batch. */
  const settle = (reads: ManifestReads | undefined, seq: number) => {
    if (reads === undefined) return;
    reads.seqs.push(seq);
    reads.sizes.push(made === undefined ? -1 : made.sizeBytes);
    reads.digests.push(made === undefined ? null : made.sha256);
  };

  const end = () => {
    if (finished) return;
    finished = true;
    entries.flush();
    port.close();
    options.onEnd(readsDone);
  };

  port.on('message', (message: ToHelper) => {
    if ('tasks' in message) readBatch(unpackTasks(message.tasks));
    else if ('stat' in message) statNames(message.stat);
    else end();
  });
  // The walker's thread went away without saying so: nothing more will come.
  port.on('close', end);
  Atomics.store(link, LINK.attached, 1);
}
