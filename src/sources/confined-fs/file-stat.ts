/**
 * What the confined seam reports about an object: the type tests of a listing or a stat, and the fields a
 * stat must carry. Node's `fs.Stats` and `fs.Dirent` have these shapes, and so do statx.ts's and
 * getdents-listing.ts's answers, so either can stand in for the other.
 */

/** What a listing or a stat says an entry is (the `fs.Dirent` / `fs.Stats` type tests). */
export interface EntryTypeTests {
  isDirectory(): boolean;
  isSymbolicLink(): boolean;
  isFile(): boolean;
  isFIFO(): boolean;
  isSocket(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
}

/** What a manifest entry needs of an lstat; Node's fs.Stats has the same shape. */
export interface EntryStat {
  dev: number;
  ino: number;
  size: number;
  mode: number;
  mtimeMs: number;
  ctimeMs: number;
  isFile(): boolean;
  isDirectory(): boolean;
  isSymbolicLink(): boolean;
}

/** What the walk asks of an fstat; Node's fs.Stats has this shape, and so does statx.ts's. */
export interface HandleStat extends EntryStat {
  isFIFO(): boolean;
  isSocket(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
}

/** One name of a listing, with the type the file system reported (all false: unknown, look it up). */
export interface ListedEntry extends EntryTypeTests {
  readonly name: Buffer;
}

/** A directory being listed: `fs.Dir` opened with `encoding: 'buffer'`, or getdents-listing.ts. */
export interface DirectoryListing {
  readSync(): ListedEntry | null;
  closeSync(): void;
}

/** What a listing or a stat says an entry is ('file': a regular file; 'other': a FIFO, socket or device). */
export type EntryKind = 'directory' | 'symlink' | 'file' | 'other' | 'unknown';

export function entryKindOf(tests: EntryTypeTests): EntryKind {
  if (tests.isDirectory()) return 'directory';
  if (tests.isSymbolicLink()) return 'symlink';
  if (tests.isFile()) return 'file';
  if (tests.isFIFO() || tests.isSocket() || tests.isCharacterDevice() || tests.isBlockDevice()) {
    return 'other';
  }
  return 'unknown';
}

/** How people read an object that is not a regular file (a gap's detail, a refusal). */
export function describeNonFile(stat: Omit<EntryTypeTests, 'isFile' | 'isSymbolicLink'>): string {
  if (stat.isDirectory()) return 'a directory';
  if (stat.isFIFO()) return 'a FIFO';
  if (stat.isSocket()) return 'a socket';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  return 'not a regular file';
}
