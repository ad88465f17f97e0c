import { closeSync, constants, fchmodSync, mkdtempSync, openSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { lockDirectoryHandle } from '../attacks/directory-lock.js';
import { claimOwnerLock, listOwnedDirectories } from '../attacks/owned-directories.js';
import { type RemovalReport, removeTree } from '../sources/confined-fs.js';

/**
 * A worker writes each run's campaign files into a private directory, `witness-worker-<pid>-XXXXXX`, and
 * removes it when it stops. A worker killed with SIGKILL (or whose machine rebooted into the same temp
 * directory) cannot; the next worker started there sweeps what dead workers left, as `witness clean`
 * does for run directories.
 *
 * Who owns a directory is decided by a lock, not by the pid in its name: the worker takes an exclusive
 * flock on a handle of the directory before writing anything into it and keeps that handle open until
 * it has removed the directory (directory-lock.ts). The kernel drops the lock when the worker dies,
 * whatever killed it. A sweep removes a directory only while holding its lock itself, and only if no
 * process has the pid in its name either: a live worker's directory is never removed, whether its pid
 * was reused, collides with another's, or belongs to another pid namespace sharing the temp directory
 * (there it names nothing, or someone else); a reused pid only keeps a dead worker's directory longer.
 * Where flock cannot be called, the pid alone decides, as it did before locks.
 *
 * What else is refused: only real directories are considered (an attacker's symlink named like one,
 * planted in the shared temp directory to make a worker delete its target, is not followed and not
 * touched), owned by the worker's own user (another user's worker directory is theirs). Removal is
 * confined: it never follows a symlink inside the tree.
 */

export const WORKER_DIRECTORY_PREFIX = 'witness-worker-';
const WORKER_DIRECTORY_NAME = /^witness-worker-([1-9][0-9]{0,9})-[A-Za-z0-9]{6}$/;
/** How many fresh directories a worker makes before giving up when sweeps keep claiming them first. */
const CREATE_TRIES = 5;

/** The `mkdtemp` prefix of a directory owned by this process id. */
export function workerDirectoryPrefix(pid: number): string {
  return `${WORKER_DIRECTORY_PREFIX}${pid}-`;
}

export interface WorkerDirectory {
  path: string;
  /** Whether this worker holds the directory's lock (false only where flock cannot be called). */
  locked: boolean;
  /** Removes the directory, then lets go of its lock. */
  remove(): Promise<void>;
}

/**
 * Makes a worker directory (0711: searchable, not listable) and takes its lock before anything is written into it. A sweep
 * that saw the new, still unlocked directory may have claimed it first: then it is left to that sweep
 * (it is empty) and another is made.
 */
export function createWorkerDirectory(parent: string, ownerPid: number): WorkerDirectory {
  for (let attempt = 1; ; attempt++) {
    const path = mkdtempSync(join(parent, workerDirectoryPrefix(ownerPid)));
    const fd = openSync(path, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
    // Searchable, not listable: as root, agents run as unprivileged uids that must reach the campaign's
    // scripts in it (campaign-bundle.ts).
    fchmodSync(fd, 0o711);
    const lock = lockDirectoryHandle(fd);
    if (lock === 'held') {
      closeSync(fd);
      // Internal: a sweep claims only a directory it saw unlocked, so CREATE_TRIES losses in a row mean
      // the lock is not doing its work.
      if (attempt >= CREATE_TRIES) {
        throw new Error(
          `every new worker directory in ${parent} was claimed by a sweep (${CREATE_TRIES} tries)`,
        );
      }
      continue;
    }
    let removed = false;
    return {
      path,
      locked: lock === 'taken',
      async remove() {
        if (removed) return;
        removed = true;
        try {
          await rm(path, { recursive: true, force: true });
        } finally {
          closeSync(fd);
        }
      },
    };
  }
}

export interface SweptDirectory {
  path: string;
  pid: number;
  report: RemovalReport;
}

export function sweepWorkerDirectories(input: {
  parent: string;
  uid: number;
  isAlive: (pid: number) => boolean;
}): SweptDirectory[] {
  const swept: SweptDirectory[] = [];
  for (const directory of listOwnedDirectories(input.parent, input.uid, (name) =>
    WORKER_DIRECTORY_NAME.test(name),
  )) {
    const pid = Number(WORKER_DIRECTORY_NAME.exec(directory.name)?.[1]);
    if (!Number.isSafeInteger(pid) || pid <= 0) continue;
    const owner = claimOwnerLock(directory);
    if (owner.state === 'held' || owner.state === 'vanished') continue;
    try {
      if (input.isAlive(pid)) continue;
      const { dev, ino } = directory.stats;
      swept.push({
        path: directory.path,
        pid,
        report: removeTree(directory.path, { expected: { dev, ino } }),
      });
    } finally {
      if (owner.state === 'claimed') owner.release();
    }
  }
  return swept;
}
