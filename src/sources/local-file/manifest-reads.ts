import type { ManifestEntry } from '../../models/manifest.js';
import type { SurfaceEntry } from '../../models/observation.js';
import type { EntryStat } from '../confined-fs/file-stat.js';
import type { ManifestRecorder } from './baseline-digests.js';
import type { LocalReader, ManifestReads, ReadLanes } from './read-lanes.js';

/**
 * The files of a manifest (SPEC §12) read by either reader thread of its walk (read-lanes.ts), as a glob
 * acquisition's are. The walk alone lists, stats, decides what is reused (baseline-digests.ts), opens each
 * file O_PATH, places it inside the root, checks its type and reserves its share of maxReadBytes, in
 * enumeration order; a reader only reopens the checked handle, checks dev/ino and hashes within the
 * reservation (reserved-read.ts, the same code on both threads, for the digest only). So each file's
 * size and digest, and the gaps, are the same whichever thread read it and whenever.
 *
 * The entry of a file submitted to a reader is added to the manifest in walk order at once, awaiting its
 * read ({@link ManifestRecorder.addAwaiting}), and completed when the read is back: at once when this
 * thread read it, with the batch's answer when the second reader did. Entries leave for the caller's
 * thread only once every entry before them is complete, so the manifest's order and content never
 * depend on timing.
 */
export class ManifestReadLanes {
  /** Walk position of each task submitted and not yet settled, by the task's seq. */
  readonly #bySeq = new Map<number, number>();
  /**
   * The file whose candidate read is under way on the walk (set around readCandidate), and its lstat
   * when the walk took one (without it, the fstat of the handle the walk checked stands in: see hand).
   */
  #claim: { entry: ManifestEntry; stat: EntryStat | undefined } | undefined;
  /** Whether the candidate under way was submitted to a reader. */
  #submitted = false;
  /** The entry this thread's reader made for the task it is reading, if any. */
  #made: SurfaceEntry | undefined;

  /**
   * @param checkCancelled throws OperationCancelled once the acquisition's flag is up: a second reader
   * that saw the flag returns its handles unread, so those entries can never be completed.
   */
  constructor(
    readonly walk: ManifestRecorder,
    readonly checkCancelled: () => void,
  ) {}

  /** This thread as a manifest's reader: digests only, and each task settled as soon as it is read. */
  reader(base: LocalReader): LocalReader {
    return {
      sink: {
        ...base.sink,
        digestOnly: true,
        entry: (entry) => {
          this.#made = entry;
        },
      },
      close: base.close,
      closeHandles: base.closeHandles,
      settled: (task) => {
        const made = this.#made;
        this.#made = undefined;
        this.#settle(task.seq, made === undefined ? undefined : made.sizeBytes, made?.sha256 ?? null);
      },
    };
  }

  /** The walk's lanes, binding each submitted task to the entry of the file being read. */
  lanes(inner: ReadLanes): ReadLanes {
    return {
      submit: (task, handleStat) => {
        const claim = this.#claim;
        const stat = claim?.stat ?? handleStat;
        if (claim === undefined || stat === undefined) {
          throw new Error('a manifest task was submitted outside a file read, or without a stat: a bug');
        }
        this.#claim = undefined;
        this.#submitted = true;
        if (claim.stat === undefined) {
          // No lstat of the name was taken (the listing said it is a regular file): the handle's own
          // fstat — the very inode the reader reopens and hashes — gives the mode, the size and the key.
          claim.entry.mode = stat.mode & 0o7777;
          claim.entry.sizeBytes = stat.size;
        }
        this.#bySeq.set(task.seq, this.walk.addAwaiting(claim.entry, stat));
        return inner.submit(task, handleStat);
      },
      finish: () => {
        inner.finish();
        // Every read came back, or the acquisition was cancelled meanwhile (and answers so, never with a
        // manifest holding entries that were not read).
        if (this.#bySeq.size > 0) this.checkCancelled();
      },
      abandon: () => inner.abandon(),
      ...(inner.statAhead === undefined ? {} : { statAhead: inner.statAhead }),
    };
  }

  /** What the second reader read in one batch. */
  onReads(reads: ManifestReads): void {
    for (let i = 0; i < reads.seqs.length; i++) {
      const size = reads.sizes[i] as number;
      this.#settle(reads.seqs[i] as number, size < 0 ? undefined : size, reads.digests[i] ?? null);
    }
  }

  /**
   * Runs one candidate read of the walk (`read`: confined-read.ts) for the file `entry` describes.
   * Returns true when the file was submitted to a reader (its entry is in the manifest, awaiting or
   * complete); false when the walk settled it itself (absent, or a gap before any read intent).
   */
  readFile(entry: ManifestEntry, stat: EntryStat | undefined, read: () => void): boolean {
    this.#claim = { entry, stat };
    this.#submitted = false;
    try {
      read();
    } finally {
      this.#claim = undefined;
    }
    return this.#submitted;
  }

  #settle(seq: number, sizeBytes: number | undefined, sha256: string | null): void {
    const index = this.#bySeq.get(seq);
    if (index === undefined) throw new Error(`manifest read ${seq} settled twice or never submitted: a bug`);
    this.#bySeq.delete(seq);
    this.walk.settleRead(index, sizeBytes, sha256);
  }
}
