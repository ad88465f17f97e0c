import { errorCode, rethrowCancelled } from './fs-errors.js';
import type { SurfaceFs } from './surface-fs.js';

/**
 * Where an open handle really is, compared with the root. The check is on the handle, not on a path
 * string we built: a file or a parent directory swapped for a symlink after listing cannot make an
 * outside object look inside, because the kernel reports the object the handle refers to.
 */
export type Placement =
  | { kind: 'inside' }
  | { kind: 'outside'; path: Buffer }
  | { kind: 'unverified'; detail: string };

const SLASH = 0x2f;

export function placeHandle(fs: SurfaceFs, fd: number, rootPath: Buffer): Placement {
  let path: Buffer;
  try {
    path = fs.handlePath(fd);
  } catch (error) {
    rethrowCancelled(error);
    // ENAMETOOLONG (a path deeper than the kernel reports), ENOENT (/proc gone): never a silent pass.
    return { kind: 'unverified', detail: `the handle's path could not be read (${errorCode(error)})` };
  }
  if (path.length === 0 || path[0] !== SLASH) {
    // Anonymous or unreachable objects ("pipe:[…]", a path outside our mount namespace).
    return { kind: 'unverified', detail: "the kernel reported no path under '/' for the handle" };
  }
  return isStrictlyInside(path, rootPath) ? { kind: 'inside' } : { kind: 'outside', path };
}

/**
 * True when `path` names something strictly below `root`: the root itself is outside, and so is a
 * sibling whose name extends the root's (`/ws2` for root `/ws`), which a bare prefix test would accept.
 */
export function isStrictlyInside(path: Buffer, root: Buffer): boolean {
  const prefixLength = root.length > 0 && root[root.length - 1] === SLASH ? root.length : root.length + 1;
  if (path.length <= prefixLength) return false;
  if (path.compare(root, 0, root.length, 0, root.length) !== 0) return false;
  return path[prefixLength - 1] === SLASH;
}
