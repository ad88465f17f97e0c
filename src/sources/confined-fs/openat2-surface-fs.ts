import fs from 'node:fs';
import { loadGetdents } from './getdents-listing.js';
import { loadStatxMountedIdentity, procfsMountedIdentity } from './mount-identity.js';
import {
  type Openat2Binding,
  Openat2Error,
  RESOLVE_BENEATH,
  RESOLVE_NO_MAGICLINKS,
  RESOLVE_NO_SYMLINKS,
} from './openat2.js';
import { loadStatx, loadStatxFd } from './statx.js';
import {
  nodeSurfaceFs,
  O_CLOEXEC,
  O_DIRECTORY,
  O_NOCTTY,
  O_NOFOLLOW,
  O_NONBLOCK,
  O_PATH,
  O_RDONLY,
  type SurfaceFs,
} from './surface-fs.js';

/**
 * The openat2 implementation of the seam. Directories and candidate files are opened by their path
 * relative to the ROOT handle with RESOLVE_BENEATH, so the kernel itself refuses, at open time, any
 * resolution that would leave the root: an absolute symlink, a `..` above the root, a parent directory
 * swapped for a link to the outside (EXDEV), and every /proc magic link (RESOLVE_NO_MAGICLINKS, ELOOP).
 * The kernel ends every scoped lookup by checking that the object it found lies under the root, so
 * there is no window between check and use: what was proven is the object the handle holds.
 *
 * - Directories: RESOLVE_NO_SYMLINKS as well, so no component, the last included, is a symlink (the walk
 *   never descends a directory link; a parent swapped for any link fails with ELOOP).
 * - Files: symlinks are followed (SPEC §5: a link to a file is a candidate) but only beneath the root,
 *   as an O_PATH handle (no read intent, no FIFO or driver side effects). A regular file proven this way
 *   skips the `readlink` of its handle (`provenInside`); the reopen for reading and the type and dev/ino
 *   checks are unchanged.
 * - A directory proven this way skips the placement check before its listing (the open was that check);
 *   the check after listing stays, and stops a directory renamed outside the root after it was opened.
 * - Listings read the directory handle itself with getdents64 (getdents-listing.ts) instead of
 *   reopening it through `/proc/self/fd` for `fs.Dir`; fstat is statx of the handle (statx.ts). Both are
 *   probed against Node's own answers and replaced by Node's calls when they cannot be used.
 *
 * Whenever openat2 fails, for any reason (ENOENT after a rename, EXDEV for an absolute link that points
 * back inside, ELOOP, EAGAIN from a concurrent rename), the call is repeated through the procfs seam,
 * whose handle-relative open and `readlink` placement decide exactly as they always have: the fast path
 * can only replace a success with a kernel-proven success, never turn a refusal into a read.
 */
export function openat2SurfaceFs(binding: Openat2Binding): SurfaceFs {
  const procfs = nodeSurfaceFs;
  procFdDirectory();
  /** statx relative to the parent handle (the manifest walk's lstat), when koffi offers it. */
  const statxAt = loadStatx();
  /** fstat of a handle by statx, when koffi offers it. */
  const statxFd = loadStatxFd();
  const mounted = loadStatxMountedIdentity() ?? procfsMountedIdentity;
  const opened = new BeneathRoot(binding, procfs);

  return {
    resolveRoot: procfs.resolveRoot,
    procIsTrusted: procfs.procIsTrusted,
    mountedIdentity: mounted.ofFd,
    mountedIdentityOfPath: mounted.ofPath,
    openRoot: (path) => opened.openRoot(path),
    openDirectoryAt: (dirFd, name) => opened.openDirectoryAt(dirFd, name),
    openPathAt: (dirFd, name, noFollow) => opened.openPathAt(dirFd, name, noFollow),
    provenInside: (fd) => opened.provenInside(fd),
    lstatAt: procfs.lstatAt,
    ...(statxAt === undefined ? {} : { entryStatAt: statxAt }),
    readlinkAt: procfs.readlinkAt,
    handlePath: (fd) => {
      const procFds = procFdHandle?.fd;
      // The same question as the procfs seam's `readlink /proc/self/fd/N` (the kernel's path for the
      // handle), asked relative to the held /proc/self/fd handle.
      return procFds === undefined ? procfs.handlePath(fd) : binding.readlinkat(procFds, fdName(fd));
    },
    fstat: statxFd ?? procfs.fstat,
    reopenForRead: (pathFd) => opened.reopenForRead(pathFd),
    // read(2) of the handle, as Node's readSync does it (any handle: koffi's or Node's).
    read: (fd, buffer, length) => binding.read(fd, buffer, length),
    // Listing by getdents64 when koffi offers it. Loaded (and probed) at the first listing, not with the
    // seam: an exact acquisition lists nothing, and the probe was ≈ 4–7 ms of every `witness score`
    // thread's start-up. loadGetdents caches its answer per thread.
    openListing: (dirFd) => (loadGetdents() ?? procfs.openListing)(dirFd),
    close: (fd) => opened.close(fd),
    closeHandles: (fds) => opened.closeHandles(fds),
    openDirectoriesAt: (dirFd, names) => opened.openDirectoriesAt(dirFd, names),
    openPathBeneath: (dirFd, names) => opened.openPathBeneath(dirFd, names),
  };
}

/** A directory handle's root handle and its path below it. */
interface BelowRoot {
  rootFd: number;
  relative: Buffer;
}

/**
 * The handles the openat2 seam opened: for each directory, the root handle it hangs from and its path
 * below it (so a child is opened from the root with RESOLVE_BENEATH), and for each handle whether the
 * kernel proved its placement and whether koffi opened it (and must close it). Every open that the fast
 * path cannot make falls back to the procfs seam.
 */
class BeneathRoot {
  readonly #binding: Openat2Binding;
  readonly #procfs: SurfaceFs;
  /** Directory handles this seam opened: the root handle they hang from and their path below it. */
  readonly #directories = new Map<number, BelowRoot>();
  /**
   * Per handle number: PROVEN (the kernel proved its placement: RESOLVE_BENEATH from the root handle),
   * NATIVE (opened through koffi, closed through it too). Cleared when the handle is closed, so a reused
   * number starts with neither. A byte per number instead of two Sets: two lookups and up to four
   * updates per file, without hashing.
   */
  readonly #handles = new HandleFlags();
  /** False once close_range failed (a kernel without it, or a filter that denies it): one by one from then. */
  #rangesWork = true;
  /**
   * What `relativeChild(dirFd, name).relative` would be, for a file's open, built in one buffer reused by
   * every file of this seam (the binding copies the path out before the call returns).
   */
  #joined = Buffer.allocUnsafe(4096);

  constructor(binding: Openat2Binding, procfs: SurfaceFs) {
    this.#binding = binding;
    this.#procfs = procfs;
  }

  openRoot(path: string): number {
    checkProcFdDirectory();
    const fd = this.#procfs.openRoot(path);
    this.#directories.set(fd, { rootFd: fd, relative: EMPTY });
    return fd;
  }

  openDirectoryAt(dirFd: number, name: Buffer): number {
    const child = this.#relativeChild(dirFd, name);
    let fd =
      child === undefined
        ? undefined
        : this.#openNative(
            child.rootFd,
            child.relative,
            O_RDONLY | O_DIRECTORY | O_NONBLOCK,
            RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
          );
    if (fd !== undefined) this.#handles.set(fd, PROVEN);
    else fd = this.#procfs.openDirectoryAt(dirFd, name);
    if (child !== undefined) this.#directories.set(fd, child);
    return fd;
  }

  openPathAt(dirFd: number, name: Buffer, noFollow: boolean | undefined): number {
    // The same path as relativeChild's, opened with the same flags from the same root handle.
    const parent = this.#directories.get(dirFd);
    const fd =
      parent === undefined || !isPlainName(name)
        ? undefined
        : this.#openNative(
            parent.rootFd,
            this.#childPathOfFile(parent, name),
            noFollow === true ? O_PATH | O_NOFOLLOW : O_PATH,
            // Not following the name itself: no link anywhere on the path either, so a parent swapped
            // for a link since it was opened cannot lead the lookup elsewhere (beneath the root) than
            // the handle the caller holds; a refusal goes by that handle (procfs), as any failure does.
            // A link as the last name is still opened as itself (O_PATH | O_NOFOLLOW).
            noFollow === true
              ? RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS
              : RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
          );
    if (fd === undefined) return this.#procfs.openPathAt(dirFd, name, noFollow);
    this.#handles.set(fd, PROVEN);
    return fd;
  }

  provenInside(fd: number): boolean {
    return this.#handles.has(fd, PROVEN);
  }

  reopenForRead(pathFd: number): number {
    const procFds = procFdHandle?.fd;
    if (procFds === undefined) return this.#procfs.reopenForRead(pathFd);
    // The same reopen as the procfs seam's (the kernel follows the handle's magic link in
    // /proc/self/fd, never a name in the workspace), relative to a held handle of that directory
    // instead of resolving `/proc/self/fd/` again for every file.
    const fd = this.#binding.openat(procFds, fdName(pathFd), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    this.#handles.set(fd, NATIVE);
    return fd;
  }

  close(fd: number): void {
    this.#directories.delete(fd);
    if ((this.#handles.take(fd) & NATIVE) !== 0) this.#binding.close(fd);
    else this.#procfs.close(fd);
  }

  closeHandles(fds: readonly number[]): void {
    // Runs of consecutive numbers, each number in the list and opened through koffi, go in one
    // close_range: every number in such a range is a handle the caller handed over, so no one else's
    // handle can be closed. Everything else is closed one by one, as `close` does.
    const sorted = fds.length === 2 ? pairInOrder(fds) : [...fds].sort((a, b) => a - b);
    let i = 0;
    while (i < sorted.length) {
      const first = sorted[i] as number;
      let j = i;
      while (
        this.#rangesWork &&
        j + 1 < sorted.length &&
        sorted[j + 1] === (sorted[j] as number) + 1 &&
        this.#handles.has(sorted[j + 1] as number, NATIVE) &&
        this.#handles.has(first, NATIVE)
      )
        j++;
      if (j > i) this.#closeRange(sorted, i, j);
      else this.close(first);
      i = j + 1;
    }
  }

  /** sorted[i..j], consecutive numbers each opened through koffi, in one close_range. */
  #closeRange(sorted: readonly number[], i: number, j: number): void {
    const first = sorted[i] as number;
    const last = sorted[j] as number;
    for (let k = i; k <= j; k++) {
      this.#directories.delete(sorted[k] as number);
      this.#handles.take(sorted[k] as number);
    }
    if (!this.#binding.closeRange(first, last)) {
      // No close_range in this kernel: close them one by one, and never try it again.
      this.#rangesWork = false;
      for (let k = i; k <= j; k++) this.#binding.close(sorted[k] as number);
    }
  }

  openDirectoriesAt(dirFd: number, names: readonly Buffer[]): number | undefined {
    // The path `openDirectoryAt` would build for the last name after opening each one in turn (each
    // name refused as relativeChild refuses it), opened with the same flags in one lookup.
    const child = this.#relativeBelow(dirFd, names);
    if (child === undefined) return undefined;
    const fd = this.#openNative(
      child.rootFd,
      child.relative,
      O_RDONLY | O_DIRECTORY | O_NONBLOCK,
      RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    );
    if (fd === undefined) return undefined;
    this.#handles.set(fd, PROVEN);
    this.#directories.set(fd, child);
    return fd;
  }

  openPathBeneath(dirFd: number, names: readonly Buffer[]): number | undefined {
    // The same path, as O_PATH (no read intent: no FIFO or driver side effects), with no link allowed
    // anywhere on it, the last component included.
    const child = this.#relativeBelow(dirFd, names);
    if (child === undefined) return undefined;
    const fd = this.#openNative(
      child.rootFd,
      child.relative,
      O_PATH,
      RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    );
    if (fd !== undefined) this.#handles.set(fd, PROVEN);
    return fd;
  }

  /** The child's path below the root, or undefined when the fast path does not apply. */
  #relativeChild(dirFd: number, name: Buffer): BelowRoot | undefined {
    const parent = this.#directories.get(dirFd);
    // An empty name or one holding '/' would build a path with a trailing or extra separator.
    if (parent === undefined || !isPlainName(name)) return undefined;
    if (parent.relative.length === 0) return { rootFd: parent.rootFd, relative: name };
    return { rootFd: parent.rootFd, relative: Buffer.concat([parent.relative, SLASH, name]) };
  }

  /** `#relativeChild(dirFd, name).relative` for a file's open, in the reused buffer. */
  #childPathOfFile(parent: { relative: Buffer }, name: Buffer): Buffer {
    const { relative } = parent;
    if (relative.length === 0) return name;
    const length = relative.length + 1 + name.length;
    if (length > this.#joined.length) this.#joined = Buffer.allocUnsafe(2 * length);
    const joined = this.#joined;
    relative.copy(joined, 0);
    joined[relative.length] = 0x2f;
    name.copy(joined, relative.length + 1);
    return joined.subarray(0, length);
  }

  /** The path below the root of `names` below `dirFd` (each name refused as relativeChild refuses it). */
  #relativeBelow(dirFd: number, names: readonly Buffer[]): BelowRoot | undefined {
    const parent = this.#directories.get(dirFd);
    if (parent === undefined || names.length === 0) return undefined;
    const parts: Buffer[] = parent.relative.length === 0 ? [] : [parent.relative];
    for (const name of names) {
      if (!isPlainName(name)) return undefined;
      if (parts.length > 0) parts.push(SLASH);
      parts.push(name);
    }
    return {
      rootFd: parent.rootFd,
      relative: parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts),
    };
  }

  #openNative(rootFd: number, relative: Buffer, flags: number, resolve: number): number | undefined {
    try {
      const fd = this.#binding.openat2(rootFd, relative, flags | O_CLOEXEC, resolve);
      this.#handles.set(fd, NATIVE);
      return fd;
    } catch (error) {
      if (!(error instanceof Openat2Error)) throw error;
      return undefined;
    }
  }
}

/** The decimal name of each fd number in /proc/self/fd, built once per number. */
const fdNames: Buffer[] = [];
function fdName(fd: number): Buffer {
  let name = fdNames[fd];
  if (name === undefined) {
    name = Buffer.from(String(fd));
    fdNames[fd] = name;
  }
  return name;
}

const PROC_SUPER_MAGIC = 0x9fa0;
let procFdHandle: { fd: number | undefined; dev: number; ino: number } | undefined;

/**
 * A handle of this process's `/proc/self/fd` directory, opened once per thread and kept for the thread's
 * life (threads share the process's fd table, so it lists the handles of every thread), and used only
 * when it is on procfs; undefined otherwise, and reopening keeps the procfs seam's path.
 */
function procFdDirectory(): void {
  if (procFdHandle !== undefined) return;
  procFdHandle = { fd: undefined, dev: 0, ino: 0 };
  try {
    const fd = fs.openSync('/proc/self/fd', O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fs.statfsSync(`/proc/self/fd/${fd}`).type === PROC_SUPER_MAGIC) {
      const { dev, ino } = fs.fstatSync(fd);
      procFdHandle = { fd, dev, ino };
    } else fs.closeSync(fd);
  } catch {
    // No procfs here: every acquisition reports confinement_unverified before it reopens anything.
  }
}

/** The held `/proc/self/fd` handle of this thread, if in use (tests). */
export function heldProcFdDirectory(): number | undefined {
  return procFdHandle?.fd;
}

/**
 * Once per acquisition (each root opened, each help job): the held handle must still be that directory. Nothing in Witness closes it, but
 * if a bug elsewhere ever did, its number could come back as a directory of the workspace, and a reopen
 * "by fd number" would then open a name an agent chose; a handle that is no longer the same is dropped
 * (never closed: its number is someone else's now) and reopening falls back to the procfs seam's path.
 */
export function checkProcFdDirectory(): void {
  const held = procFdHandle;
  if (held?.fd === undefined) return;
  try {
    const stat = fs.fstatSync(held.fd);
    if (stat.dev === held.dev && stat.ino === held.ino) return;
  } catch {
    // Fall through: not the handle it was.
  }
  procFdHandle = { fd: undefined, dev: 0, ino: 0 };
}

const pair: number[] = [0, 0];
/** A two-handle list in ascending order, in a reused array (closeHandles is synchronous). */
function pairInOrder(fds: readonly number[]): readonly number[] {
  const a = fds[0] as number;
  const b = fds[1] as number;
  pair[0] = Math.min(a, b);
  pair[1] = Math.max(a, b);
  return pair;
}

/** One name of a directory: not empty, no '/' (it would add or end a path component), no NUL. */
function isPlainName(name: Buffer): boolean {
  return name.length > 0 && !name.includes(0x2f) && !name.includes(0);
}

const PROVEN = 1;
const NATIVE = 2;

/** A byte of flags per handle number, grown as numbers grow. */
class HandleFlags {
  #bytes = new Uint8Array(1024);
  set(fd: number, flag: number): void {
    if (fd >= this.#bytes.length) {
      const grown = new Uint8Array(Math.max(2 * this.#bytes.length, fd + 1));
      grown.set(this.#bytes);
      this.#bytes = grown;
    }
    this.#bytes[fd] = (this.#bytes[fd] as number) | flag;
  }
  has(fd: number, flag: number): boolean {
    return fd >= 0 && fd < this.#bytes.length && ((this.#bytes[fd] as number) & flag) !== 0;
  }
  /** The handle's flags, cleared (it is being closed). */
  take(fd: number): number {
    if (fd < 0 || fd >= this.#bytes.length) return 0;
    const flags = this.#bytes[fd] as number;
    this.#bytes[fd] = 0;
    return flags;
  }
}

const SLASH = Buffer.from('/');
const EMPTY = Buffer.alloc(0);
