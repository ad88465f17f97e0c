import { lstatSync, readdirSync, type Stats } from 'node:fs';
import { join } from 'node:path';

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
