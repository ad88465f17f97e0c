import type { ManifestEntry } from '../../models/manifest.js';
import type { CoverageGap, SurfaceEntry } from '../../models/observation.js';
import type { DigestCarryWalk } from './digest-carry.js';
import type { SourceLimits } from './limits.js';
import type { SurfaceFs } from './surface-fs.js';

/** Counts of the work one acquisition did; stored in the observation's metadata. */
export interface AcquisitionStats {
  directoriesListed: number;
  entriesExamined: number;
  candidates: number;
  filesRead: number;
  bytesRead: number;
}

/** Thrown inside the walk when the caller's cancellation flag is set; never escapes the acquisition. */
export class AcquisitionCancelled extends Error {
  constructor() {
    super('acquisition cancelled');
    this.name = 'AcquisitionCancelled';
  }
}

/**
 * Lets a cancellation through a catch that turns I/O errors into gaps: an aborted acquisition must reject,
 * never come back as a partial observation that looks like evidence.
 */
export function rethrowCancelled(error: unknown): void {
  if (error instanceof AcquisitionCancelled) throw error;
}

/** Thrown inside the walk when a budget stops enumeration at once (the gap is already recorded). */
export class EnumerationStopped extends Error {
  constructor() {
    super('enumeration stopped by a budget');
    this.name = 'EnumerationStopped';
  }
}

/** Entries per batch handed to a sink: about 1 MB of small files' text per message. */
const ENTRY_BATCH = 1000;

/** Everything one acquisition shares: the seam, budgets spent so far, what was found, the root. */
export class AcquisitionState {
  readonly entries: SurfaceEntry[] = [];
  readonly gaps: CoverageGap[] = [];
  /** Set once maxListedEntries is exhausted: no further directory is listed in this acquisition. */
  listingBudgetSpent = false;
  readonly stats: AcquisitionStats = {
    directoriesListed: 0,
    entriesExamined: 0,
    candidates: 0,
    filesRead: 0,
    bytesRead: 0,
  };

  /**
   * Where full batches of entries go while the walk runs (the worker posts them to the main thread, so
   * their transfer and validation overlap the walk). Without a sink every entry stays in `entries`.
   */
  entrySink: ((batch: SurfaceEntry[]) => void) | undefined;

  /**
   * Set in manifest mode (SPEC §12): the walk records every entry it meets here — directories, symlinks
   * (never followed) and other objects (never opened) as well as files — instead of reading candidates.
   */
  manifest: ManifestEntry[] | undefined;

  /** Set in manifest mode: the stat keys recorded for a later manifest, and the baseline's to carry from. */
  digestCarry: DigestCarryWalk | undefined;

  constructor(
    readonly fs: SurfaceFs,
    readonly limits: SourceLimits,
    /** The root's own path as the kernel reports it for the root handle. */
    readonly rootPath: Buffer,
    readonly rootFd: number,
    private readonly cancelled: () => boolean,
    /** Scratch buffer for reads, reused across files. */
    readonly chunk: Buffer,
  ) {}

  /** Called at every directory entry and every read chunk. */
  checkCancelled(): void {
    if (this.cancelled()) throw new AcquisitionCancelled();
  }

  /** Records a read entry; hands a full batch to the sink, if there is one. */
  addEntry(entry: SurfaceEntry): void {
    this.entries.push(entry);
    if (this.entrySink !== undefined && this.entries.length >= ENTRY_BATCH) {
      this.entrySink(this.entries.splice(0));
    }
  }

  gap(reason: CoverageGap['reason'], uri?: string, detail?: string): void {
    const gap: CoverageGap = { reason };
    if (uri !== undefined) gap.uri = uri;
    if (detail !== undefined) gap.detail = detail;
    this.gaps.push(gap);
  }

  get readBytesLeft(): number {
    return this.limits.maxReadBytes - this.stats.bytesRead;
  }
}

/** The errno code of a Node fs error, or 'UNKNOWN'. */
export function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'UNKNOWN';
}
