import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { lockDirectoryHandle } from './directory-lock.js';

/**
 * The directories in a shared parent (the system temp directory) that a sweep may consider: the name is
 * accepted, it is a real directory — not a symlink planted in the shared parent to make a sweep delete
 * its target, never followed — and it is owned by `uid` (another user's directories are theirs). Sorted
 * by name; an unreadable parent or entry is skipped, never thrown.
 */
export interface OwnedDirectory {
  name: string;
  path: string;
  /** Its lstat, to check at removal that the path still names this directory (device and inode). */
  stats: Stats;
}

export function listOwnedDirectories(
  parent: string,
  uid: number,
  accept: (name: string) => boolean,
): OwnedDirectory[] {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return [];
  }
  const owned: OwnedDirectory[] = [];
  for (const name of names.sort()) {
    if (!accept(name)) continue;
    const path = join(parent, name);
    let stats: Stats;
    try {
      stats = lstatSync(path);
    } catch {
      continue;
    }
    if (stats.isDirectory() && stats.uid === uid) owned.push({ name, path, stats });
  }
  return owned;
}

/** What a sweep learns from a directory's owner lock (directory-lock.ts). */
export type OwnerLockState =
  /** A live process holds the lock: the directory is in use. */
  | { state: 'held' }
  /**
   * Nobody held it, and now this process does: no owner can be using the directory, and no other sweep
   * can remove it meanwhile. Remove it, then `release()` (closes the handle, which drops the lock).
   */
  | { state: 'claimed'; release(): void }
  /** Locks cannot be taken here (no flock): the caller falls back on the owner's pid. */
  | { state: 'unlockable' }
  /** The path no longer names the listed directory (removed or replaced since it was listed). */
  | { state: 'vanished' };

/**
 * Tries the owner lock of a listed directory. The directory is opened without following a symlink and
 * checked to be the one listed (device and inode), so a directory swapped in after the listing is not
 * claimed in its place.
 */
export function claimOwnerLock(directory: OwnedDirectory): OwnerLockState {
  let fd: number;
  try {
    fd = openSync(directory.path, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch {
    return { state: 'vanished' };
  }
  let keep = false;
  try {
    const stats = fstatSync(fd);
    if (stats.dev !== directory.stats.dev || stats.ino !== directory.stats.ino) return { state: 'vanished' };
    const attempt = lockDirectoryHandle(fd);
    if (attempt === 'held') return { state: 'held' };
    if (attempt === 'unavailable') return { state: 'unlockable' };
    keep = true;
    let released = false;
    return {
      state: 'claimed',
      release() {
        if (released) return;
        released = true;
        closeSync(fd);
      },
    };
  } finally {
    if (!keep) closeSync(fd);
  }
}
