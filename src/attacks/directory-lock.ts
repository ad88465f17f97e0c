import { createRequire } from 'node:module';
import os from 'node:os';

/**
 * An owner's lock on a directory it made in a shared parent (the system temp directory): an exclusive
 * flock(2) on a handle of the directory, kept open for as long as the directory is in use. The kernel
 * drops the lock when that handle closes — when the owner disposes of the directory, or dies of any
 * signal — so a sweep that finds the lock free knows no live process holds the directory, and a sweep
 * that finds it held leaves the directory alone.
 *
 * Why not the owner's pid alone: pids are reused, and the pid written by a process in another pid
 * namespace (a container sharing the temp directory) names nothing, or someone else, here: a worker saw
 * a live worker's campaign directory as "left by worker process N, which is gone" and removed it. A
 * flock belongs to the open file in the kernel, whichever namespace opened it.
 *
 * flock(2) is reached through koffi (Node has no binding for it), loaded on first use. Where it cannot be
 * called (koffi does not load, a platform without flock) {@link lockDirectoryHandle} says so, and sweeps
 * fall back to the owner's pid.
 */

const LOCK_EX = 2;
const LOCK_NB = 4;
const EINTR = 4;
/** EWOULDBLOCK (= EAGAIN on Linux): the lock is held through another open file. */
const EWOULDBLOCK = 11;

export type DirectoryLockAttempt =
  /** This handle now holds the lock (until it is closed). */
  | 'taken'
  /** Another open file holds it: a live process owns the directory. */
  | 'held'
  /** flock cannot be called here, or failed for another reason: nothing is known. */
  | 'unavailable';

type Flock = (fd: number, operation: number) => number;
let flock: { call: Flock; errno: () => number } | { reason: string } | undefined;

function loadFlock(): { call: Flock; errno: () => number } | { reason: string } {
  if (os.platform() !== 'linux') return { reason: 'directory locks are wired for Linux only' };
  try {
    const koffi = createRequire(import.meta.url)('koffi') as {
      load(path: null): { func(signature: string): (...args: unknown[]) => unknown };
      errno(): number;
    };
    const call = koffi.load(null).func('int flock(int fd, int operation)');
    return { call: (fd, operation) => Number(call(fd, operation)), errno: () => koffi.errno() };
  } catch (error) {
    return { reason: `koffi could not be loaded (${(error as Error).message})` };
  }
}

/**
 * Tries the exclusive lock on `fd` (a handle of a directory) without waiting. An owner takes it right
 * after making the directory and before writing anything into it; a sweep takes it before removing one.
 */
export function lockDirectoryHandle(fd: number): DirectoryLockAttempt {
  flock ??= loadFlock();
  if (!('call' in flock)) return 'unavailable';
  for (;;) {
    if (flock.call(fd, LOCK_EX | LOCK_NB) === 0) return 'taken';
    const errno = flock.errno();
    if (errno === EINTR) continue;
    return errno === EWOULDBLOCK ? 'held' : 'unavailable';
  }
}

/** Why directory locks cannot be used here, or undefined when they can. */
export function directoryLocksUnavailable(): string | undefined {
  flock ??= loadFlock();
  return 'reason' in flock ? flock.reason : undefined;
}
