import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import type { ManifestEntry } from '../../models/manifest.js';
import { checkProcFdDirectory } from '../confined-fs/openat2-surface-fs.js';
import { procfsSurfaceFs } from '../confined-fs/surface-fs.js';
import {
  chooseSurfaceFs,
  type SurfaceFsImplementation,
  type SurfaceFsKind,
} from '../confined-fs/surface-fs-choice.js';
import { type AcquireOutcome, type AcquireRequest, acquireSync } from './acquire-sync.js';
import { LINGER_MS, MailboxWatch } from './job-mailbox.js';
import {
  manifestTransfer,
  type PackedManifestEntries,
  type PackedSurfaceEntries,
  packManifestEntries,
} from './packed-entries.js';
import type { ToHelper } from './read-lanes.js';
import { serveSecondReader } from './second-reader.js';

/**
 * Worker thread entry: runs acquisitions with synchronous I/O off the main thread (measured ~8× cheaper
 * per file than the promise API). Jobs run one at a time; each carries a shared cancellation flag that
 * the walk checks at every directory entry and every read chunk. A worker may instead serve as the
 * second reader of another worker's glob acquisition (`help`, second-reader.ts).
 */

export interface AcquireJob {
  kind: 'acquire';
  id: number;
  request: AcquireRequest;
  /** Int32Array over this buffer; non-zero means cancelled. */
  cancel: SharedArrayBuffer;
  /** Which seam to use (chosen in the worker: koffi is loaded, and probed, per thread). */
  surfaceFs: SurfaceFsKind;
  /** The walker's end of the link to a second reader, and the link's shared state (read-lanes.ts). */
  helper?: { port: MessagePort; state: SharedArrayBuffer };
}

/** An exact acquisition given through the mailbox (job-mailbox.ts): an AcquireJob's plain data. */
export type MailboxJob = Pick<AcquireJob, 'kind' | 'id' | 'request' | 'surfaceFs'>;

export interface HelpJob {
  kind: 'help';
  /** This help job's own id (its replies carry it). */
  id: number;
  port: MessagePort;
  state: SharedArrayBuffer;
  /** The helped acquisition's cancellation flag. */
  cancel: SharedArrayBuffer;
  maxContentBytes: number;
  /** The helped acquisition's seam kind: the reader reopens, fstats and closes through the same kind. */
  surfaceFs: SurfaceFsKind;
  /** The helped walk is a manifest's: digests go back to the walker, not to the caller (second-reader.ts). */
  manifest?: boolean;
  /** Test seam: milliseconds before each file read (an injected slow reader). */
  delayMs?: number;
}

export type AcquireReply =
  | { id: number; entries: PackedSurfaceEntries | PackedManifestEntries }
  | {
      id: number;
      outcome: AcquireOutcome;
      implementation: SurfaceFsImplementation;
    }
  | { id: number; helped: number }
  | { id: number; wantsHelper: true }
  | { id: number; failure: { name: string; message: string; code?: string } }
  /** Sent once by a thread started with `probeAtStart`: the seam is loaded and probed. */
  | { probed: true };

/** What the pool tells a thread when it creates it. */
export interface AcquireWorkerData {
  /** Load and probe the openat2 seam at once, then say so (`{ probed: true }`), before any job. */
  probeAtStart?: boolean;
  /** The thread's mailbox (job-mailbox.ts): the pool may give it exact jobs there while it lingers. */
  mailbox?: SharedArrayBuffer;
}

const port = parentPort;
// Internal: only the acquisition pool starts this module, always as a worker thread.
if (port === null) throw new Error('acquire-worker.js must run as a worker thread');

// A thread started ahead of its first job (the pool's `prewarm`) loads and probes the openat2 seam now
// (koffi, its native module, the RESOLVE_BENEATH, statx and getdents probes), while its creator is still
// loading; a job that arrives meanwhile waits in the port's queue. The choice is the same cached,
// per-thread one a job would make. The pool keeps such a thread referenced until `probed` arrives: a
// process that ended meanwhile would terminate the thread inside koffi's native code, and a thread
// terminated there aborts the whole process (SIGABRT, seen on `witness score --help`).
if ((workerData as AcquireWorkerData | null)?.probeAtStart === true) {
  try {
    chooseSurfaceFs('auto');
  } finally {
    port.postMessage({ probed: true } satisfies AcquireReply);
  }
}

const mailbox = (workerData as AcquireWorkerData | null)?.mailbox;
const watch = mailbox === undefined ? undefined : new MailboxWatch(mailbox);

/** When this thread last posted an acquisition's reply (performance.now()). */
let repliedAt = Number.NEGATIVE_INFINITY;

port.on('message', (job: AcquireJob | HelpJob) => {
  watch?.received();
  if (job.kind === 'help') {
    help(job);
    return;
  }
  // Jobs following one another: this one came within a linger of the last reply. Only then does the
  // thread stay awake after it, so a caller whose acquisitions are spaced out wastes no core waiting.
  const backToBack = performance.now() - repliedAt < LINGER_MS;
  const flag = new Int32Array(job.cancel);
  const reply = acquire(job, () => Atomics.load(flag, 0) !== 0);
  // Awake for a moment: the next exact job may come through the mailbox (job-mailbox.ts).
  if (watch !== undefined && backToBack) watch.linger(reply, postReply, runMailboxJob, LINGER_MS);
  else postReply(reply);
});

function postReply(reply: AcquireReply): void {
  port?.postMessage(reply);
  repliedAt = performance.now();
}

/** An exact job given through the mailbox: the same acquisition, cancelled through the mailbox's flag. */
function runMailboxJob(job: unknown): AcquireReply {
  return acquire(job as MailboxJob, (watch as MailboxWatch).cancelled);
}

/** One acquisition job, answered: its outcome, or the failure that stopped it. */
function acquire(job: MailboxJob | AcquireJob, cancelled: () => boolean): AcquireReply {
  const helper = 'helper' in job ? job.helper : undefined;
  try {
    const choice = chooseSurfaceFs(job.surfaceFs);
    if (!choice.ok) throw Object.assign(new Error(choice.message), { name: 'InvalidOptionError' });
    return {
      id: job.id,
      // Entries leave in batches while the walk runs, so their transfer and validation on the main
      // thread overlap the walk instead of following it (one clone of 100,000 entries took ~0.9 s).
      outcome: acquireSync(job.request, choice.fs, cancelled, {
        onEntries: (packed) => postSurfaceEntries(job.id, packed),
        onManifestEntries: (entries) => postManifestEntries(job.id, entries),
        ...(helper === undefined
          ? {}
          : {
              helper: {
                port: helper.port,
                state: new Int32Array(helper.state),
                request: () => port?.postMessage({ id: job.id, wantsHelper: true } satisfies AcquireReply),
              },
            }),
      }),
      implementation: choice.implementation,
    };
  } catch (error) {
    const err = error as { name?: string; message?: string; code?: unknown };
    return {
      id: job.id,
      failure: {
        name: String(err.name ?? 'Error'),
        message: String(err.message ?? error),
        ...(typeof err.code === 'string' ? { code: err.code } : {}),
      },
    };
  } finally {
    // Whatever happened (an exact locator, an unavailable root, a cancellation), the second reader is
    // told that nothing more comes; it answers the pool once it has closed every handle it was given.
    helper?.port.postMessage({ end: true } satisfies ToHelper);
  }
}

function help(job: HelpJob): void {
  serveSecondReader({
    port: job.port,
    link: new Int32Array(job.state),
    cancel: new Int32Array(job.cancel),
    // Read handles are reopened through /proc/self/fd by both seams; each seam closes what it opened,
    // so this thread's own instance of the walker's seam kind serves (procfs if it cannot load here).
    fs: helperSeam(job.surfaceFs),
    maxContentBytes: job.maxContentBytes,
    onEntries: (entries) => postSurfaceEntries(job.id, entries),
    onEnd: (readsDone) => port?.postMessage({ id: job.id, helped: readsDone } satisfies AcquireReply),
    ...(job.manifest === true ? { manifest: true } : {}),
    ...(job.delayMs === undefined ? {} : { delayMs: job.delayMs }),
  });
}

/** A batch of surface entries, packed (packed-entries.ts): its text bytes are transferred, not copied. */
function postSurfaceEntries(id: number, packed: PackedSurfaceEntries): void {
  port?.postMessage({ id, entries: packed } satisfies AcquireReply, [packed.text]);
}

/** A batch of manifest entries, packed as columns (packed-entries.ts). */
function postManifestEntries(id: number, entries: ManifestEntry[]): void {
  const packed = packManifestEntries(entries);
  port?.postMessage({ id, entries: packed } satisfies AcquireReply, manifestTransfer(packed));
}

function helperSeam(kind: SurfaceFsKind) {
  checkProcFdDirectory();
  const choice = chooseSurfaceFs(kind);
  return choice.ok ? choice.fs : procfsSurfaceFs;
}
