import fs from 'node:fs';
import type { DirectoryListing, EntryStat, HandleStat } from './file-stat.js';
import { type MountedIdentity, procfsMountedIdentity } from './mount-identity.js';

/**
 * The synchronous file-system seam of a confined acquisition. Every child is reached relative to an open
 * handle, and names are bytes. Two implementations: this file's procfs one (`/proc/self/fd/<fd>/<name>`
 * gives openat semantics from plain Node, and `readlink` of the handle proves where it is) and
 * openat2-surface-fs.ts (the kernel resolves beneath the root handle). Tests wrap either to count bytes
 * read and directories listed.
 */
export interface SurfaceFs {
  /**
   * The root's real path by name (`realpath`). Used only where the root handle's own kernel path cannot
   * be read (no trusted /proc), to name the root in the `confinement_unverified` answer.
   */
  resolveRoot(path: string): string;
  /** True when /proc is procfs, so `/proc/self/fd` reports where handles really are. */
  procIsTrusted(): boolean;
  /**
   * Opens the root (only) by the path the caller gave, once per acquisition. The kernel resolves every
   * symlink on the way in this one lookup, the last component included, so the handle is the directory
   * `realpath` would have named at that instant, and its kernel path (`handlePath`) is the resolved root:
   * there is no window between resolving the path and opening what it named. O_DIRECTORY opens nothing
   * but a directory (a file, FIFO or device at the path fails with ENOTDIR before it is opened).
   */
  openRoot(path: string): number;
  /** Device, inode and mount id of the handle `fd` (mount-identity.ts). */
  mountedIdentity(fd: number): MountedIdentity;
  /**
   * The same of what `path` names here, by name, following links: used once per acquisition to check that
   * the root handle's kernel path names, in this process, the very directory and mount that handle holds.
   */
  mountedIdentityOfPath(path: Buffer): MountedIdentity;
  /** Opens `name` in `dirFd` as a directory, never following a symlink. */
  openDirectoryAt(dirFd: number, name: Buffer): number;
  /**
   * Opens `name` in `dirFd` as an O_PATH handle, following symlinks (unless `noFollow`: then a symlink
   * named is itself the handle's object): no read intent, no side effects.
   */
  openPathAt(dirFd: number, name: Buffer, noFollow?: boolean): number;
  /**
   * True only when the kernel itself proved, at open time, that `fd` (opened by this seam's `openPathAt`
   * or `openDirectoryAt`) lies beneath the root handle (openat2 with RESOLVE_BENEATH from the root). The
   * caller may then skip `handlePath` for a regular file, and the check before listing a directory;
   * anything else is placed by `handlePath` as before.
   */
  provenInside(fd: number): boolean;
  /** lstat of `name` in `dirFd` (does not follow a final symlink). */
  lstatAt(dirFd: number, name: Buffer): fs.Stats;
  /**
   * Optional: the same lstat reduced to what a manifest entry needs, by a cheaper route (statx.ts).
   * Absent, the manifest walk uses `lstatAt`.
   */
  entryStatAt?(dirFd: number, name: Buffer): EntryStat;
  /** The target stored in the symlink `name` in `dirFd`, as bytes; the link is never followed. */
  readlinkAt(dirFd: number, name: Buffer): Buffer;
  /** Where an open handle really is: the kernel's path for it (`readlink /proc/self/fd/N`). */
  handlePath(fd: number): Buffer;
  fstat(fd: number): HandleStat;
  /** Reopens an O_PATH handle for reading, non-blocking, through the handle (never by name). */
  reopenForRead(pathFd: number): number;
  read(fd: number, buffer: Buffer, length: number): number;
  /** Lists a directory through its own handle, one entry at a time (names as bytes). */
  openListing(dirFd: number): DirectoryListing;
  close(fd: number): void;
  /**
   * Optional (openat2 seam): closes every handle in `fds` (each one exactly as `close` would), in fewer
   * system calls: a run of consecutive numbers that are all in the list goes in one close_range(2). Only
   * numbers in the list are ever closed. The order of the list is not kept.
   */
  closeHandles?(fds: readonly number[]): void;
  /**
   * Optional (openat2 seam): the directory reached from `dirFd` through `names`, opened in ONE lookup —
   * the very open `openDirectoryAt` makes for the last of them (its path beneath the root handle, with
   * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS, so no component is a symlink and none
   * leaves the root) — registered as if each had been opened in turn. Returns undefined whenever that does
   * not apply or openat2 refused or failed, for any reason: the caller then opens them one at a time with
   * `openDirectoryAt`, which decides as it always has. An exact locator's parents use it (exact-walk.ts).
   */
  openDirectoriesAt?(dirFd: number, names: readonly Buffer[]): number | undefined;
  /**
   * Optional (openat2 seam): the object reached from `dirFd` through `names`, opened as O_PATH in ONE
   * lookup beneath the root handle with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS: no
   * component, the last included, is a symlink, and none leaves the root. Its success is the very object
   * that opening each parent with `openDirectoryAt` and then the last name with `openPathAt` would reach
   * (those refuse linked parents and follow no link when there is none), so an exact locator with no link
   * on its path needs neither the parents' handles nor their closes (exact-walk.ts). Returns undefined
   * whenever that does not apply or openat2 refused or failed, for any reason (a link anywhere on the path
   * included): the caller then walks as it always has.
   */
  openPathBeneath?(dirFd: number, names: readonly Buffer[]): number | undefined;
}

/** O_PATH is not in fs.constants; its value is the same on every Linux architecture Node supports. */
export const O_PATH = 0o10000000;
export const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY } = fs.constants;
export const O_CLOEXEC = 0o2000000;

/**
 * `/proc/self/fd/<fd>/` per fd number, built once: the prefix depends on the number alone, and the few
 * directory handles a walk holds are reused for thousands of children. Bounded by the fd numbers used.
 */
const childPrefixes: Buffer[] = [];

/** `/proc/self/fd/<fd>/<name>` as bytes. No path is ever built with a trailing `/` or `/.`. */
export function childPath(dirFd: number, name: Buffer): Buffer {
  let prefix = childPrefixes[dirFd];
  if (prefix === undefined) {
    prefix = Buffer.from(`/proc/self/fd/${dirFd}/`);
    childPrefixes[dirFd] = prefix;
  }
  const path = Buffer.allocUnsafe(prefix.length + name.length);
  prefix.copy(path, 0);
  name.copy(path, prefix.length);
  return path;
}

export function fdPath(fd: number): string {
  return `/proc/self/fd/${fd}`;
}

const PROC_SUPER_MAGIC = 0x9fa0;

/** The procfs implementation: every placement is proven by `readlink /proc/self/fd/N`. */
export const nodeSurfaceFs: SurfaceFs = {
  resolveRoot: (path) => fs.realpathSync.native(path),
  procIsTrusted: () => {
    try {
      return fs.statfsSync('/proc/self/fd').type === PROC_SUPER_MAGIC;
    } catch {
      return false;
    }
  },
  openRoot: (path) => fs.openSync(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC),
  mountedIdentity: (fd) => procfsMountedIdentity.ofFd(fd),
  mountedIdentityOfPath: (path) => procfsMountedIdentity.ofPath(path),
  openDirectoryAt: (dirFd, name) =>
    fs.openSync(childPath(dirFd, name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK),
  openPathAt: (dirFd, name, noFollow) =>
    fs.openSync(childPath(dirFd, name), O_PATH | O_CLOEXEC | (noFollow === true ? O_NOFOLLOW : 0)),
  provenInside: () => false,
  lstatAt: (dirFd, name) => fs.lstatSync(childPath(dirFd, name)),
  readlinkAt: (dirFd, name) => fs.readlinkSync(childPath(dirFd, name), { encoding: 'buffer' }),
  handlePath: (fd) => fs.readlinkSync(fdPath(fd), { encoding: 'buffer' }),
  fstat: (fd) => fs.fstatSync(fd),
  reopenForRead: (pathFd) => fs.openSync(fdPath(pathFd), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC),
  read: (fd, buffer, length) => fs.readSync(fd, buffer, 0, length, null),
  // Node's types do not model `encoding: 'buffer'` for opendir: its Dirents' names are Buffers.
  openListing: (dirFd) =>
    fs.opendirSync(fdPath(dirFd), {
      encoding: 'buffer' as BufferEncoding,
      bufferSize: 128,
    }) as unknown as DirectoryListing,
  close: (fd) => fs.closeSync(fd),
};

/** Alias that names the implementation. */
export const procfsSurfaceFs = nodeSurfaceFs;
