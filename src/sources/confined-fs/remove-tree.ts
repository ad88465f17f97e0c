import fs from 'node:fs';
import { openDirectoryAt, openDirectoryPath } from './handles.js';
import { childPath, fdPath } from './surface-fs.js';

/**
 * Removing a directory tree an agent had write access to, written once (workspace cleanup, `witness
 * clean`). The tree is hostile: it may be deeper than PATH_MAX, hold millions of entries, immutable
 * files, mount points, and a process may still be swapping names in it. What each rule stops:
 *
 * - Every name is reached relative to its parent's open handle (`/proc/self/fd/<dirfd>/<name>`: openat,
 *   unlinkat and rmdir-at semantics from plain Node), and a directory is entered only by opening it
 *   `O_DIRECTORY|O_NOFOLLOW`. A subdirectory swapped for a symlink to a root-only directory (a
 *   `renameat2` exchange by a less privileged daemon) is unlinked as a link, never entered: removal cannot
 *   leave the tree. `unlink` and `rmdir` never follow a final symlink.
 * - No path string is ever built from the root, so depth is unbounded by PATH_MAX.
 * - Memory is bounded: one directory handle per level, one listing open at a time (read in small
 *   batches), and the names that could not be removed at each level (capped); never a list of the tree.
 *   (Node 20's recursive `fs.rm` starts one removal per entry at once: 1M files cost 1.9 GB.)
 * - Another file system is never entered (a mount point inside the tree is reported, not emptied).
 * - Nothing throws for a hostile tree: each entry that cannot be removed is a {@link RemovalFailure}
 *   (path and reason) and the walk goes on, so the campaign keeps the attempt's result.
 */

export interface RemovalFailure {
  /** The entry's path relative to the removed directory's parent, for people (may be abbreviated). */
  path: string;
  /** errno code or a sentence (`mount point`, `replaced during removal`). */
  reason: string;
}

export interface RemovalReport {
  /** True when the directory and everything in it are gone. */
  removed: boolean;
  /** Entries unlinked or directories removed. */
  removedEntries: number;
  /** At most `maxReportedFailures` failures, in the order met. */
  failures: RemovalFailure[];
  /** Failures beyond those listed. */
  unlistedFailures: number;
}

export interface RemoveTreeOptions {
  /** When given, the directory must still be this object (device and inode), or nothing is removed. */
  expected?: { dev: number; ino: number } | undefined;
  /** Default 20. */
  maxReportedFailures?: number | undefined;
  /** Names remembered as unremovable per directory before giving up on that directory. Default 10,000. */
  maxFailedNamesPerDirectory?: number | undefined;
}

interface Frame {
  fd: number;
  name: Buffer;
  dev: number;
  /** Names (latin1 keys of the raw bytes) left in place at this level. */
  failed: Set<string>;
  gaveUp: boolean;
}

/** Removes the directory `name` in `parentFd` and everything below it; see the module comment. */
export function removeTreeAt(
  parentFd: number,
  name: string | Buffer,
  options: RemoveTreeOptions = {},
): RemovalReport {
  const rootName = typeof name === 'string' ? Buffer.from(name) : name;
  const maxReported = options.maxReportedFailures ?? 20;
  const maxFailedNames = options.maxFailedNamesPerDirectory ?? 10_000;
  const report: RemovalReport = { removed: false, removedEntries: 0, failures: [], unlistedFailures: 0 };
  const stack: Frame[] = [];
  const fail = (names: Buffer[], reason: string) => {
    if (report.failures.length < maxReported) report.failures.push({ path: displayPath(names), reason });
    else report.unlistedFailures++;
  };
  const namesTo = (last?: Buffer) => [...stack.map((frame) => frame.name), ...(last ? [last] : [])];

  let rootFd: number;
  try {
    rootFd = openDirectoryAt(parentFd, rootName);
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ENOENT') return { ...report, removed: true };
    fail([rootName], code === 'ENOTDIR' || code === 'ELOOP' ? 'not a directory (a symlink?)' : code);
    return report;
  }
  const rootStat = fs.fstatSync(rootFd);
  if (
    options.expected !== undefined &&
    (rootStat.dev !== options.expected.dev || rootStat.ino !== options.expected.ino)
  ) {
    fs.closeSync(rootFd);
    fail([rootName], 'replaced: it is no longer the directory that was created');
    return report;
  }
  stack.push({ fd: rootFd, name: rootName, dev: rootStat.dev, failed: new Set(), gaveUp: false });

  /** Enters `entry` of `top` when it is a directory on the same device; false when it is not a directory. */
  const enter = (top: Frame, entry: Buffer): boolean | 'failed' => {
    let fd: number;
    try {
      fd = openDirectoryAt(top.fd, entry);
    } catch (error) {
      const code = errorCode(error);
      if (code === 'ENOTDIR' || code === 'ELOOP') return false;
      if (code === 'ENOENT') return 'failed';
      fail(namesTo(entry), code);
      top.failed.add(entry.toString('latin1'));
      return 'failed';
    }
    const stat = fs.fstatSync(fd);
    if (stat.dev !== top.dev) {
      fs.closeSync(fd);
      fail(namesTo(entry), 'mount point (another file system is never emptied)');
      top.failed.add(entry.toString('latin1'));
      return 'failed';
    }
    stack.push({ fd, name: entry, dev: stat.dev, failed: new Set(), gaveUp: false });
    return true;
  };

  while (stack.length > 0) {
    const top = stack[stack.length - 1] as Frame;
    let descended = false;
    if (!top.gaveUp) {
      let listing: fs.Dir;
      try {
        listing = fs.opendirSync(fdPath(top.fd), { encoding: 'buffer' as BufferEncoding, bufferSize: 64 });
      } catch (error) {
        fail(namesTo(), `cannot be listed (${errorCode(error)})`);
        top.gaveUp = true;
        continue;
      }
      try {
        for (let dirent = readNext(listing); dirent !== null; dirent = readNext(listing)) {
          const entry = dirent.name as unknown as Buffer;
          if (top.failed.has(entry.toString('latin1'))) continue;
          if (dirent.isDirectory()) {
            const entered = enter(top, entry);
            if (entered === true) {
              descended = true;
              break;
            }
            if (entered === 'failed') continue;
          }
          try {
            fs.unlinkSync(childPath(top.fd, entry));
            report.removedEntries++;
          } catch (error) {
            const code = errorCode(error);
            if (code === 'ENOENT') continue;
            // A name that became a directory after it was listed (EISDIR), entered like any directory.
            if (code === 'EISDIR' && enter(top, entry) === true) {
              descended = true;
              break;
            }
            if (code !== 'EISDIR') fail(namesTo(entry), code);
            top.failed.add(entry.toString('latin1'));
          }
          if (top.failed.size >= maxFailedNames) {
            fail(namesTo(), 'too many entries could not be removed; the rest of this directory was left');
            top.gaveUp = true;
            break;
          }
        }
      } catch (error) {
        fail(namesTo(), `listing failed (${errorCode(error)})`);
        top.gaveUp = true;
      } finally {
        listing.closeSync();
      }
    }
    if (descended) continue;
    // Everything removable at this level is gone: remove the directory itself by name in its parent.
    stack.pop();
    fs.closeSync(top.fd);
    const parent = stack[stack.length - 1];
    const emptied = top.failed.size === 0 && !top.gaveUp;
    if (!emptied) {
      parent?.failed.add(top.name.toString('latin1'));
      continue;
    }
    try {
      fs.rmdirSync(childPath(parent?.fd ?? parentFd, top.name));
      report.removedEntries++;
      if (parent === undefined) report.removed = true;
    } catch (error) {
      const code = errorCode(error);
      if (code === 'ENOENT' && parent === undefined) report.removed = true;
      else if (code !== 'ENOENT') {
        fail([...namesTo(), top.name], code === 'ENOTEMPTY' ? 'replaced during removal (not empty)' : code);
        parent?.failed.add(top.name.toString('latin1'));
      }
    }
  }
  return report;
}

/** Removes the directory at an absolute path: its parent is opened by path, the rest by handle. */
export function removeTree(path: string, options: RemoveTreeOptions = {}): RemovalReport {
  const slash = path.lastIndexOf('/');
  const parentPath = slash <= 0 ? '/' : path.slice(0, slash);
  const name = path.slice(slash + 1);
  let parentFd: number;
  try {
    parentFd = openDirectoryPath(parentPath);
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ENOENT') return { removed: true, removedEntries: 0, failures: [], unlistedFailures: 0 };
    return {
      removed: false,
      removedEntries: 0,
      failures: [{ path, reason: `its parent cannot be opened (${code})` }],
      unlistedFailures: 0,
    };
  }
  try {
    return removeTreeAt(parentFd, name, options);
  } finally {
    fs.closeSync(parentFd);
  }
}

function readNext(listing: fs.Dir): fs.Dirent | null {
  return listing.readSync();
}

/** A readable path for a report: deep paths keep their first and last few names. */
function displayPath(names: readonly Buffer[]): string {
  const shown =
    names.length <= 12
      ? names.map((name) => name.toString('utf8'))
      : [
          ...names.slice(0, 4).map((name) => name.toString('utf8')),
          `…(${names.length - 8} more)…`,
          ...names.slice(-4).map((name) => name.toString('utf8')),
        ];
  return shown.join('/');
}

function errorCode(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : String((error as Error | undefined)?.message ?? error);
}
