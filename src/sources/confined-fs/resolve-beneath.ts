import { errorCode, rethrowCancelled } from './fs-errors.js';
import { decodeName, escapeName } from './names.js';
import type { SurfaceFs } from './surface-fs.js';

/**
 * Resolves a path below the root the way openat2(2) does with RESOLVE_BENEATH: symbolic links on the way
 * are followed, but only while the resolution stays beneath the root. A link with an absolute target, or
 * a `..` that would climb above the root, is refused; more than {@link MAX_LINKS} links is a loop.
 *
 * It works component by component on the seam's own handle primitives, and never asks the kernel to follow
 * a link: each name is looked up relative to the handle of the directory before it (`lstatAt`), a link's
 * target is read (`readlinkAt`) and its names are resolved in turn, a directory is opened `O_NOFOLLOW`
 * (`openDirectoryAt`: on the openat2 seam, beneath the root handle with RESOLVE_NO_SYMLINKS, so the kernel
 * proves each step), and `..` goes back to the handle held for the directory above — never to whatever
 * the kernel's `..` is now. A link swapped to point outside after its target was read changes nothing: the
 * names resolved are opened, the link is not followed. The answer is the real path (names without a link
 * among them, the last excepted when `followLast` is false) and the links followed, for the evidence.
 */

/** Links followed in one resolution before it is called a loop (the kernel's own limit, MAXSYMLINKS). */
export const MAX_LINKS = 40;

/** A link followed: its uri below the root and the target stored in it (as text, escaped if not UTF-8). */
export interface LinkHop {
  uri: string;
  target: string;
}

export type Resolution =
  /**
   * `names` reach the object without a link (but the last, when it was not to be followed); `isDirectory`
   * is what the last lookup said it is (the root itself, when `names` is empty).
   */
  | { kind: 'resolved'; names: Buffer[]; isDirectory: boolean; hops: LinkHop[] }
  /** Nothing at the path: a name is missing, or a non-directory stands where a directory must be. */
  | { kind: 'absent'; hops: LinkHop[] }
  /** A link leads out: an absolute target, or `..` above the root. Nothing beyond it was looked up. */
  | { kind: 'leaves_root'; hop: LinkHop; absolute: boolean; hops: LinkHop[] }
  /** More than MAX_LINKS links. */
  | { kind: 'loop'; hops: LinkHop[] }
  /** A lookup failed (EACCES, an I/O error): the uri of the name, and the errno. */
  | { kind: 'failed'; uri: string; code: string; hops: LinkHop[] };

const DOT = 0x2e;
const SLASH = 0x2f;

/**
 * @param names the path below the root handle `rootFd`, one name each (the caller's own names or a
 * locator's segments: never empty, never holding `/`).
 * @param followLast follow a link at the last name too (what a read of the path would reach).
 */
export function resolveBeneath(
  fs: SurfaceFs,
  rootFd: number,
  names: readonly Buffer[],
  followLast: boolean,
): Resolution {
  const real: Buffer[] = [];
  /** handles[i] is the directory that real[0..i) names; handles[0] is the root's (never closed here). */
  const handles: number[] = [rootFd];
  const pending: Buffer[] = [...names];
  const hops: LinkHop[] = [];
  try {
    while (pending.length > 0) {
      const name = pending.shift() as Buffer;
      if (name.length === 0 || (name.length === 1 && name[0] === DOT)) continue;
      if (name.length === 2 && name[0] === DOT && name[1] === DOT) {
        if (real.length === 0) {
          const hop = hops.at(-1) ?? { uri: '/', target: '..' };
          return { kind: 'leaves_root', hop, absolute: false, hops };
        }
        real.pop();
        fs.close(handles.pop() as number);
        continue;
      }
      const dirFd = handles.at(-1) as number;
      const last = pending.length === 0;
      const uri = uriOf([...real, name]);
      let isLink: boolean;
      let isDirectory: boolean;
      try {
        const stat = fs.lstatAt(dirFd, name);
        isLink = stat.isSymbolicLink();
        isDirectory = stat.isDirectory();
      } catch (error) {
        rethrowCancelled(error);
        const code = errorCode(error);
        if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'absent', hops };
        return { kind: 'failed', uri, code, hops };
      }
      if (isLink && (!last || followLast)) {
        if (hops.length >= MAX_LINKS) return { kind: 'loop', hops };
        let target: Buffer;
        try {
          target = fs.readlinkAt(dirFd, name);
        } catch (error) {
          rethrowCancelled(error);
          const code = errorCode(error);
          if (code === 'ENOENT') return { kind: 'absent', hops };
          return { kind: 'failed', uri, code, hops };
        }
        const hop = { uri, target: decodeName(target) ?? escapeName(target) };
        hops.push(hop);
        if (target.length > 0 && target[0] === SLASH)
          return { kind: 'leaves_root', hop, absolute: true, hops };
        // An empty target names nothing (the kernel answers ENOENT).
        if (target.length === 0) return { kind: 'absent', hops };
        const parts = splitTarget(target);
        pending.unshift(...parts);
        continue;
      }
      if (last) {
        real.push(name);
        return { kind: 'resolved', names: real, isDirectory, hops };
      }
      // A name followed by more names must be a directory to look them up in.
      if (!isDirectory) return { kind: 'absent', hops };
      let fd: number;
      try {
        fd = fs.openDirectoryAt(dirFd, name);
      } catch (error) {
        rethrowCancelled(error);
        const code = errorCode(error);
        if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'absent', hops };
        // ELOOP: a link was swapped in since the lstat above; it is not followed.
        return { kind: 'failed', uri, code, hops };
      }
      handles.push(fd);
      real.push(name);
    }
    // The last names were `.`, `..` or empty: the resolution ended at a directory already opened.
    return { kind: 'resolved', names: real, isDirectory: true, hops };
  } finally {
    for (let i = handles.length - 1; i > 0; i--) fs.close(handles[i] as number);
  }
}

/**
 * A link target's names. A trailing `/` (or `/.`) asks for a directory: it becomes a final `.`, which the
 * loop above reaches only after the name before it was opened as a directory.
 */
function splitTarget(target: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  let start = 0;
  for (let i = 0; i <= target.length; i++) {
    if (i === target.length || target[i] === SLASH) {
      if (i > start) parts.push(target.subarray(start, i));
      start = i + 1;
    }
  }
  if (target[target.length - 1] === SLASH) parts.push(Buffer.from('.'));
  return parts;
}

/** The uri of a real path below the root (names that are not UTF-8 shown escaped: only for people). */
export function uriOf(names: readonly Buffer[]): string {
  return `/${names.map((name) => decodeName(name) ?? escapeName(name)).join('/')}`;
}

/** The links followed, as people read them on an entry: `/.git -> real-git`, several joined by `, `. */
export function describeHops(hops: readonly LinkHop[]): string {
  return hops.map((hop) => `${hop.uri} -> ${hop.target}`).join(', ');
}
