import type { ManifestEntry } from '../../models/manifest.js';
import type { CoverageGap, SurfaceEntry } from '../../models/observation.js';
import { OperationCancelled } from '../confined-fs/fs-errors.js';
import type { SurfaceFs } from '../confined-fs/surface-fs.js';
import type { ManifestRecorder } from './baseline-digests.js';
import type { SourceLimits } from './limits.js';
import type { ManifestReadLanes } from './manifest-reads.js';
import { type PackedSurfaceEntries, SurfaceEntryPacker } from './packed-entries.js';
import { type LocalReader, localLanes, type ReadLanes } from './read-lanes.js';

/** Counts of the work one acquisition did; stored in the observation's metadata. */
export interface AcquisitionStats {
  directoriesListed: number;
  entriesExamined: number;
  candidates: number;
  filesRead: number;
  bytesRead: number;
}

/** Thrown inside the walk when a budget stops enumeration at once (the gap is already recorded). */
export class EnumerationStopped extends Error {
  constructor() {
    super('enumeration stopped by a budget');
    this.name = 'EnumerationStopped';
  }
}

/** Everything one acquisition shares: the seam, budgets spent so far, what was found, the root. */
export class AcquisitionState {
  readonly entries: SurfaceEntry[] = [];
  /** In the order they were recorded; {@link orderedGaps} puts them in enumeration order. */
  readonly gaps: CoverageGap[] = [];
  /** Per gap: its place in enumeration order (see {@link gap} and {@link taskGap}). */
  readonly #gapKeys: number[] = [];
  #gapsInOrder = true;
  /** Read tasks created so far (each candidate submitted to a reader gets the next number). */
  #tasks = 0;
  /** Bytes of maxReadBytes reserved so far, in enumeration order. */
  #reserved = 0;
  /** Set once maxListedEntries is exhausted: no further directory is listed in this acquisition. */
  listingBudgetSpent = false;
  /** Each real directory listed, with the pattern positions it was listed for (`firstListing`). */
  readonly #listings = new Set<string>();
  readonly stats: AcquisitionStats = {
    directoriesListed: 0,
    entriesExamined: 0,
    candidates: 0,
    filesRead: 0,
    bytesRead: 0,
  };

  /**
   * Where full batches of entries go while the walk runs, packed (the worker posts them to the main
   * thread, so their transfer and validation overlap the walk): see {@link packEntriesTo}. Without it
   * every entry stays in `entries`.
   */
  #packer: SurfaceEntryPacker | undefined;

  /**
   * Set in manifest mode (SPEC §12): the walk records every entry it meets here — directories, symlinks
   * (never followed) and other objects (never opened) as well as files — instead of reading candidates.
   */
  manifest: ManifestEntry[] | undefined;

  /** Set in manifest mode: the stat keys recorded for a later manifest, and the baseline's to reuse from. */
  recorder: ManifestRecorder | undefined;

  /** Set in manifest mode: completes each file's entry with what its reader read (manifest-reads.ts). */
  manifestReads: ManifestReadLanes | undefined;

  /** This thread as a reader: what reserved-read.ts needs, bound to this acquisition. */
  readonly reader: LocalReader;

  /** Where checked candidates go to be read (read-lanes.ts); by default, read here at once. */
  lanes: ReadLanes;

  constructor(
    readonly fs: SurfaceFs,
    readonly limits: SourceLimits,
    /** The root's own path as the kernel reports it for the root handle. */
    readonly rootPath: Buffer,
    readonly rootFd: number,
    private readonly cancelled: () => boolean,
    /** Scratch buffer for reads, reused across files. */
    readonly chunk: Buffer,
  ) {
    this.reader = {
      sink: {
        chunk,
        maxContentBytes: limits.maxContentBytes,
        fs,
        fileRead: () => {
          this.stats.filesRead++;
        },
        checkCancelled: () => this.checkCancelled(),
        gap: (seq, gap) => this.taskGap(seq, gap),
        entry: (entry) => this.addEntry(entry),
        bytesRead: (count) => {
          this.stats.bytesRead += count;
        },
      },
      close: (fd) => fs.close(fd),
      closeHandles: (fds) => {
        if (fs.closeHandles !== undefined) fs.closeHandles(fds);
        else for (const fd of fds) fs.close(fd);
      },
    };
    this.lanes = localLanes(this.reader);
  }

  /**
   * True the first time the real directory `realUri` is listed for these pattern positions in this
   * acquisition, false after: a directory reached again through a symbolic link, a link loop included, is
   * listed once (SPEC §13).
   */
  firstListing(realUri: string, positions: readonly number[]): boolean {
    const key = `${realUri}\0${positions.join(',')}`;
    if (this.#listings.has(key)) return false;
    this.#listings.add(key);
    return true;
  }

  /** Called at every directory entry and every read chunk. */
  checkCancelled(): void {
    if (this.cancelled()) throw new OperationCancelled();
  }

  /**
   * From now on entries are packed and submitted to `sink` in batches as each fills (the last one by
   * {@link flushEntries}); a whole ASCII file's text goes into its batch as bytes.
   */
  packEntriesTo(sink: (batch: PackedSurfaceEntries) => void): void {
    const packer = new SurfaceEntryPacker(sink);
    this.#packer = packer;
    this.reader.sink.asciiEntry = (uri, sizeBytes, sha256, modifiedAt, text, via) =>
      packer.addAscii(uri, sizeBytes, sha256, modifiedAt, text, via);
  }

  /** Records a read entry: packed for the sink, if there is one, or kept in `entries`. */
  addEntry(entry: SurfaceEntry): void {
    if (this.#packer === undefined) this.entries.push(entry);
    else this.#packer.add(entry);
  }

  /** Hands the last, partial batch to the sink (nothing without one, or when it is empty). */
  flushEntries(): void {
    this.#packer?.flush();
  }

  /**
   * A gap found by the walk itself. It sorts after the reads of every task created so far and before
   * the next task's: where the same walk on one thread, reading each file as it met it, would put it.
   */
  gap(reason: CoverageGap['reason'], uri?: string, detail?: string): void {
    const gap: CoverageGap = { reason };
    if (uri !== undefined) gap.uri = uri;
    if (detail !== undefined) gap.detail = detail;
    this.#pushGap(2 * this.#tasks, gap);
  }

  /** A gap found while reading task `seq` (on either reader thread, at any time). */
  taskGap(seq: number, gap: CoverageGap): void {
    this.#pushGap(2 * seq + 1, gap);
  }

  #pushGap(key: number, gap: CoverageGap): void {
    const keys = this.#gapKeys;
    if (keys.length > 0 && key < (keys[keys.length - 1] as number)) this.#gapsInOrder = false;
    keys.push(key);
    this.gaps.push(gap);
  }

  /** The gaps in enumeration order, whichever thread read which file and when. */
  orderedGaps(): CoverageGap[] {
    if (this.#gapsInOrder) return this.gaps;
    const keys = this.#gapKeys;
    const order = this.gaps.map((_, i) => i);
    order.sort((a, b) => (keys[a] as number) - (keys[b] as number) || a - b);
    return order.map((i) => this.gaps[i] as CoverageGap);
  }

  /** Bytes of maxReadBytes not yet reserved for a file. */
  get readBytesLeft(): number {
    return this.limits.maxReadBytes - this.#reserved;
  }

  /** The number of the next read task, in enumeration order. */
  nextTaskSeq(): number {
    return this.#tasks++;
  }

  /**
   * Sets aside `min(size, what is left)` bytes of maxReadBytes for the next file, in enumeration order.
   * Only the walking thread calls this, so which files the budget covers never depends on timing.
   */
  reserve(size: number): number {
    const reservation = Math.max(0, Math.min(size, this.limits.maxReadBytes - this.#reserved));
    this.#reserved += reservation;
    return reservation;
  }
}
