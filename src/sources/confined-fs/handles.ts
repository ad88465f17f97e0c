import fs from 'node:fs';
import { type EntryKind, entryKindOf } from './file-stat.js';
import {
  childPath,
  fdPath,
  nodeSurfaceFs,
  O_CLOEXEC,
  O_DIRECTORY,
  O_NOFOLLOW,
  O_NONBLOCK,
  O_PATH,
  O_RDONLY,
} from './surface-fs.js';

/**
 * Handle primitives for code that creates, plants, spools or reads in a directory an agent can write to
 * (a workspace, an attempt's home, a run directory). Each object is reached relative to an open directory
 * handle, by one name, never following a symlink at that name: a name swapped for a link to the outside
 * between two calls cannot redirect a write, a read or a directory the caller then descends. Every call
 * throws the kernel's errno as Node does (`code`), so callers decide what each failure means.
 */

/** A directory opened for listing and for opening what is in it, never through a final symlink. */
const OPEN_DIRECTORY = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

/**
 * Opens a directory the caller names by its own path (a root it chose, not a name an agent chose): the
 * kernel follows links on the way, once, and the handle is the directory they led to at that instant.
 */
export function openDirectoryPath(path: string): number {
  return fs.openSync(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/**
 * Opens, by its real path, a directory the caller made itself (a run directory): the last name must be that
 * directory, never a link planted at its name (ELOOP).
 */
export function openOwnDirectory(realPath: string): number {
  return fs.openSync(realPath, OPEN_DIRECTORY);
}

/** Opens `name` in `dirFd` as a directory; a symlink, a file or a FIFO there fails (ENOTDIR). */
export function openDirectoryAt(dirFd: number, name: string | Buffer): number {
  return fs.openSync(childPath(dirFd, bytes(name)), OPEN_DIRECTORY);
}

/** Creates the directory `name` in `dirFd` (EEXIST when anything is there) and opens it, never following. */
export function makeDirectoryAt(dirFd: number, name: string | Buffer, mode: number): number {
  const path = childPath(dirFd, bytes(name));
  fs.mkdirSync(path, { mode });
  return fs.openSync(path, OPEN_DIRECTORY);
}

/**
 * Opens the directory `segments` names below `rootFd`, one name at a time, each relative to the handle
 * of the one before and never through a symlink. With `createMode`, a missing directory is created with
 * that mode. Throws the errno of the first name that fails, with `segment` (its index) set on the error.
 * The caller owns the returned handle (it is `rootFd` itself when `segments` is empty).
 */
export function openDirectoryBeneath(
  rootFd: number,
  segments: readonly string[],
  createMode?: number,
): number {
  let current = rootFd;
  for (const [index, segment] of segments.entries()) {
    let next: number;
    try {
      try {
        next = openDirectoryAt(current, segment);
      } catch (error) {
        if (createMode === undefined || (error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        next = makeDirectoryAt(current, segment, createMode);
      }
    } catch (error) {
      if (current !== rootFd) fs.closeSync(current);
      throw Object.assign(error as Error, { segment: index });
    }
    if (current !== rootFd) fs.closeSync(current);
    current = next;
  }
  return current;
}

/**
 * Creates the file `name` in `dirFd` and opens it for writing (with `readable`, reading too): exclusive
 * (EEXIST when anything is there, a dangling link included) and never through a symlink.
 */
export function createFileAt(dirFd: number, name: string | Buffer, mode: number, readable = false): number {
  const access = readable ? fs.constants.O_RDWR : fs.constants.O_WRONLY;
  return fs.openSync(
    childPath(dirFd, bytes(name)),
    access | fs.constants.O_CREAT | fs.constants.O_EXCL | O_NOFOLLOW | O_CLOEXEC,
    mode,
  );
}

/** Creates `name` in `dirFd` as {@link createFileAt} does, writes `data` whole and closes it. */
export function writeNewFileAt(
  dirFd: number,
  name: string | Buffer,
  data: string | Buffer,
  mode: number,
): void {
  const fd = createFileAt(dirFd, name, mode);
  try {
    const content = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    let written = 0;
    while (written < content.length) written += fs.writeSync(fd, content, written, content.length - written);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Opens `name` in `dirFd` as an O_PATH handle without following a symlink: no read intent, so a FIFO or a
 * device there is not opened (no writer unblocked, no driver acting); the caller fstats it first.
 */
export function openPathAt(dirFd: number, name: string | Buffer): number {
  return fs.openSync(childPath(dirFd, bytes(name)), O_PATH | O_NOFOLLOW | O_CLOEXEC);
}

/**
 * Reopens an O_PATH handle for reading through the handle itself (never by name), without blocking: what
 * is read is the object that was checked.
 */
export function reopenForRead(pathFd: number): number {
  return fs.openSync(fdPath(pathFd), O_RDONLY | O_NONBLOCK | fs.constants.O_NOCTTY | O_CLOEXEC);
}

/**
 * Opens `name` in `dirFd` for writing, creating it (mode `mode`) when absent, without truncating it, never
 * through a symlink and without blocking on a FIFO: the caller checks the handle (a regular file, inside)
 * before it truncates or writes, so a file swapped in since its check is never destroyed unverified.
 */
export function openForWriteAt(dirFd: number, name: string | Buffer, mode: number): number {
  return fs.openSync(
    childPath(dirFd, bytes(name)),
    fs.constants.O_WRONLY | fs.constants.O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
    mode,
  );
}

/**
 * Reads at most `maxBytes` of the regular file `name` in `dirFd` (a marker, a small record Witness wrote),
 * never through a symlink and never from a FIFO or device. Returns the bytes and whether the file held
 * more; throws ENOENT, ELOOP and the like, and EINVAL for an object that is not a regular file.
 */
export function readSmallFileAt(
  dirFd: number,
  name: string | Buffer,
  maxBytes: number,
): {
  bytes: Buffer;
  truncated: boolean;
} {
  const pathFd = openPathAt(dirFd, name);
  try {
    if (!fs.fstatSync(pathFd).isFile())
      throw Object.assign(new Error('not a regular file'), { code: 'EINVAL' });
    const fd = reopenForRead(pathFd);
    try {
      const buffer = Buffer.alloc(maxBytes + 1);
      let read = 0;
      while (read < buffer.length) {
        const count = fs.readSync(fd, buffer, read, buffer.length - read, null);
        if (count === 0) break;
        read += count;
      }
      return { bytes: buffer.subarray(0, Math.min(read, maxBytes)), truncated: read > maxBytes };
    } finally {
      fs.closeSync(fd);
    }
  } finally {
    fs.closeSync(pathFd);
  }
}

/** One name of a directory and what the listing says it is. */
export interface ListedName {
  name: Buffer;
  kind: EntryKind;
}

/**
 * Lists the directory `dirFd` through its own handle, at most `maxEntries` names (a directory of millions
 * costs no more than that); `complete` is false when names were left unread.
 */
export function listDirectoryAt(
  dirFd: number,
  maxEntries: number,
): { names: ListedName[]; complete: boolean } {
  const listing = nodeSurfaceFs.openListing(dirFd);
  const names: ListedName[] = [];
  try {
    for (let entry = listing.readSync(); entry !== null; entry = listing.readSync()) {
      if (names.length >= maxEntries) return { names, complete: false };
      names.push({ name: entry.name, kind: entryKindOf(entry) });
    }
    return { names, complete: true };
  } finally {
    listing.closeSync();
  }
}

/** The kernel's path for an open handle (`readlink /proc/self/fd/N`), as bytes. */
export function handlePath(fd: number): Buffer {
  return nodeSurfaceFs.handlePath(fd);
}

/** fstat of any handle (an O_PATH one included). */
export function statHandle(fd: number): fs.Stats {
  return fs.fstatSync(fd);
}

export function closeHandle(fd: number): void {
  fs.closeSync(fd);
}

function bytes(name: string | Buffer): Buffer {
  return typeof name === 'string' ? Buffer.from(name) : name;
}
