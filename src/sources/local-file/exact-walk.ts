import { errorCode, rethrowCancelled } from '../confined-fs/fs-errors.js';
import type { AcquisitionState } from './acquisition-state.js';
import { readCandidate, readOpenedCandidate } from './confined-read.js';
import {
  describeVia,
  finalLinkHops,
  openRealDirectory,
  resolveInRoot,
  unresolvedGap,
} from './linked-path.js';

/**
 * Acquires an exact locator. Each intermediate directory is opened by name relative to its parent's
 * handle with O_NOFOLLOW: the kernel never traverses a symlinked parent (so a parent swapped for a link to
 * an outside directory cannot redirect the lookup). A parent that is a link is followed only by resolving
 * it beneath the root (followLinkedParents), and one that leaves the root is reported, never guessed. The
 * last segment goes to the confined read, which follows a symlink only to check where it lands.
 *
 * On the openat2 seam the parents are first opened in one lookup from the root handle with no symlink
 * allowed anywhere on the way (`openDirectoriesAt`): the same open that seam makes for the last parent
 * when it opens them one at a time, so it stops the same swap (a parent replaced by a link to the outside
 * makes it fail, and the walk one at a time then names the link). Only its successes are used.
 *
 * Before either, on that seam, the whole path is opened as O_PATH in one lookup with no link allowed
 * anywhere on it, the file's own name included (`openPathBeneath`): an exact locator with no link on its
 * path (the common case) then needs no parent handle at all. Only its successes are used.
 *
 * A parent that can be searched but not read is walked through by an O_PATH handle (`openSearchOnly`), so
 * both seams answer as the kernel's lookup does: the file is read.
 *
 * An absent file (ENOENT/ENOTDIR along the path) is a proven negative: no entry, no gap.
 */
export function walkExact(state: AcquisitionState, uri: string, segments: readonly string[]): void {
  const { fs } = state;
  const opened: number[] = [];
  try {
    let dirFd = state.rootFd;
    let first = 0;
    const parents = segments.length - 1;
    const names = segments.map((segment) => Buffer.from(segment));
    if (parents > 0 && fs.openPathBeneath !== undefined) {
      // openat2 seam: the whole path in one O_PATH lookup beneath the root with no link anywhere on it,
      // the file's own name included. Its success is the object the walk below would reach (every parent
      // a real directory, the last name no link), so neither the parents' handles nor their closes are
      // needed; any refusal or failure (a link anywhere, a missing name) walks below as always.
      state.checkCancelled();
      const pathFd = fs.openPathBeneath(dirFd, names);
      if (pathFd !== undefined) {
        state.stats.candidates++;
        readOpenedCandidate(state, pathFd, uri);
        return;
      }
    }
    if (parents > 1 && fs.openDirectoriesAt !== undefined) {
      // openat2 seam: the last parent's own open (beneath the root, no symlink anywhere on the way)
      // without the opens of the parents above it, whose success that one lookup implies. Any refusal
      // or failure walks them one at a time below, so a missing, symlinked or non-directory parent is
      // found and reported exactly as before.
      state.checkCancelled();
      const fd = fs.openDirectoriesAt(dirFd, names.slice(0, parents));
      if (fd !== undefined) {
        opened.push(fd);
        dirFd = fd;
        first = parents;
      }
    }
    for (let i = first; i < parents; i++) {
      state.checkCancelled();
      const name = names[i] as Buffer;
      try {
        dirFd = fs.openDirectoryAt(dirFd, name);
        opened.push(dirFd);
      } catch (error) {
        rethrowCancelled(error);
        if (errorCode(error) === 'EACCES') {
          const searched = openSearchOnly(state, dirFd, name, names[i + 1] as Buffer);
          if (searched !== undefined) {
            opened.push(searched);
            dirFd = searched;
            continue;
          }
        }
        const where = `/${segments.slice(0, i + 1).join('/')}`;
        if (classifyParentFailure(state, dirFd, name, uri, where, error) === 'link') {
          followLinkedParents(state, uri, names);
        }
        return;
      }
    }
    state.stats.candidates++;
    const name = names[parents] as Buffer;
    const via = describeVia(finalLinkHops(state, names.slice(0, parents), dirFd, name));
    readCandidate(state, dirFd, name, uri, false, via);
  } finally {
    for (const fd of opened.reverse()) fs.close(fd);
  }
}

/**
 * A parent that may be searched but not read (mode 0711 for this reader, or a file system that refuses to
 * open it for reading): the lookup of a path through it is allowed, as it is to the whole-path lookup on
 * the openat2 seam, so the walk goes on through an O_PATH handle of it (no listing is needed for an exact
 * locator) instead of calling the path unreadable. Undefined, and the caller reports the parent's EACCES
 * as before, when the name is not a directory itself (O_NOFOLLOW: a link is never traversed) or when a
 * lookup through it (`next`, the following name) is refused too: a directory that cannot be searched.
 */
function openSearchOnly(
  state: AcquisitionState,
  dirFd: number,
  name: Buffer,
  next: Buffer,
): number | undefined {
  let fd: number;
  try {
    fd = state.fs.openPathAt(dirFd, name, true);
  } catch (error) {
    rethrowCancelled(error);
    return undefined;
  }
  let searchable = false;
  try {
    if (!state.fs.fstat(fd).isDirectory()) return undefined;
    try {
      state.fs.lstatAt(fd, next);
    } catch (error) {
      rethrowCancelled(error);
      if (errorCode(error) === 'EACCES') return undefined;
      // ENOENT and the like: the lookup ran, so the directory can be searched.
    }
    searchable = true;
    return fd;
  } finally {
    if (!searchable) state.fs.close(fd);
  }
}

/**
 * Why a parent could not be opened as a directory: nothing there, or a file where a directory would have
 * to be (the path holds nothing); a gap (recorded here); or `link`: a symbolic link, which the caller
 * follows beneath the root.
 */
function classifyParentFailure(
  state: AcquisitionState,
  dirFd: number,
  name: Buffer,
  uri: string,
  where: string,
  error: unknown,
): 'link' | undefined {
  const code = errorCode(error);
  if (code === 'ENOENT') return undefined;
  if (code === 'ENOTDIR' || code === 'ELOOP') {
    try {
      // Not a link: a file where a directory would have to be, and the path holds nothing.
      return state.fs.lstatAt(dirFd, name).isSymbolicLink() ? 'link' : undefined;
    } catch (lstatError) {
      rethrowCancelled(lstatError);
      if (errorCode(lstatError) !== 'ENOENT') {
        state.gap('listing_failed', uri, `${where}: lookup failed (${errorCode(lstatError)})`);
      }
      return undefined;
    }
  }
  state.gap('listing_failed', uri, `${where}: lookup failed (${code})`);
  return undefined;
}

/**
 * An exact locator with a symbolic link among its parents: the parents are resolved beneath the root
 * (linked-path.ts), their real directory opened again from the root with no link on the way, and the last
 * name read there as any candidate is, the links followed recorded on its entry. A link that leaves the
 * root is a gap; nothing at the resolved path is a proven negative, as for any missing name.
 */
function followLinkedParents(state: AcquisitionState, uri: string, names: readonly Buffer[]): void {
  const parents = names.slice(0, -1);
  const name = names.at(-1) as Buffer;
  const resolution = resolveInRoot(state, parents, true);
  if (resolution.kind !== 'resolved') {
    const gap = unresolvedGap(uri, resolution);
    if (gap !== undefined) state.gap(gap.reason, gap.uri, gap.detail);
    return;
  }
  // A file where a directory would have to be: the path holds nothing.
  if (!resolution.isDirectory) return;
  const dirFd = openRealDirectory(state, resolution.names, uri);
  if (dirFd === undefined || dirFd === 'absent') return;
  try {
    state.stats.candidates++;
    const hops = [...resolution.hops, ...finalLinkHops(state, resolution.names, dirFd, name)];
    readCandidate(state, dirFd, name, uri, false, describeVia(hops));
  } finally {
    if (dirFd !== state.rootFd) state.fs.close(dirFd);
  }
}

export type LinkTarget = 'directory' | 'other' | 'absent' | { failed: string };

/**
 * What a symlink resolves to, found with an O_PATH open (no side effects) and fstat; never listed. A
 * dangling link leaves nothing at the path ('absent'); a loop or a denied lookup is a failure.
 */
export function resolveLinkTarget(state: AcquisitionState, dirFd: number, name: Buffer): LinkTarget {
  let fd: number;
  try {
    fd = state.fs.openPathAt(dirFd, name);
  } catch (error) {
    rethrowCancelled(error);
    const code = errorCode(error);
    return code === 'ENOENT' || code === 'ENOTDIR' ? 'absent' : { failed: code };
  }
  try {
    return state.fs.fstat(fd).isDirectory() ? 'directory' : 'other';
  } finally {
    state.fs.close(fd);
  }
}
