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
  const removal = new TreeRemoval(parentFd, options);
  if (!removal.openRoot(rootName)) return removal.report;
  while (removal.stack.length > 0) {
    const top = removal.stack[removal.stack.length - 1] as Frame;
    if (!top.gaveUp && removal.emptyLevel(top)) continue;
    removal.removeLevel(top);
  }
  return removal.report;
}

/** One removal's state: the stack of open directories (one handle per level) and the report so far. */
class TreeRemoval {
  readonly report: RemovalReport = { removed: false, removedEntries: 0, failures: [], unlistedFailures: 0 };
  readonly stack: Frame[] = [];
  readonly #parentFd: number;
  readonly #options: RemoveTreeOptions;
  readonly #maxReported: number;
  readonly #maxFailedNames: number;

  constructor(parentFd: number, options: RemoveTreeOptions) {
    this.#parentFd = parentFd;
    this.#options = options;
    this.#maxReported = options.maxReportedFailures ?? 20;
    this.#maxFailedNames = options.maxFailedNamesPerDirectory ?? 10_000;
  }

  /**
   * Opens the directory to remove as the stack's first level; false when there is nothing to do (gone
   * already: `report.removed`) or it cannot be removed (not a directory, or not the expected one).
   */
  openRoot(rootName: Buffer): boolean {
    let rootFd: number;
    try {
      rootFd = openDirectoryAt(this.#parentFd, rootName);
    } catch (error) {
      const code = errorCode(error);
      if (code === 'ENOENT') {
        this.report.removed = true;
        return false;
      }
      this.#fail([rootName], code === 'ENOTDIR' || code === 'ELOOP' ? 'not a directory (a symlink?)' : code);
      return false;
    }
    const rootStat = fs.fstatSync(rootFd);
    const expected = this.#options.expected;
    if (expected !== undefined && (rootStat.dev !== expected.dev || rootStat.ino !== expected.ino)) {
      fs.closeSync(rootFd);
      this.#fail([rootName], 'replaced: it is no longer the directory that was created');
      return false;
    }
    this.stack.push({ fd: rootFd, name: rootName, dev: rootStat.dev, failed: new Set(), gaveUp: false });
    return true;
  }

  /**
   * Removes what it can of the level's entries, listed in small batches; true when it descended into a
   * subdirectory instead (pushed on the stack: this level is listed again once that one is gone).
   */
  emptyLevel(top: Frame): boolean {
    let listing: fs.Dir;
    try {
      listing = fs.opendirSync(fdPath(top.fd), { encoding: 'buffer' as BufferEncoding, bufferSize: 64 });
    } catch (error) {
      this.#fail(this.#namesTo(), `cannot be listed (${errorCode(error)})`);
      top.gaveUp = true;
      return false;
    }
    try {
      for (let dirent = readNext(listing); dirent !== null; dirent = readNext(listing)) {
        const entry = dirent.name as unknown as Buffer;
        if (top.failed.has(entry.toString('latin1'))) continue;
        if (dirent.isDirectory()) {
          const entered = this.#enter(top, entry);
          if (entered === true) return true;
          if (entered === 'failed') continue;
        }
        const unlinked = this.#unlink(top, entry);
        if (unlinked === 'entered') return true;
        if (unlinked === 'vanished') continue;
        if (top.failed.size >= this.#maxFailedNames) {
          this.#fail(
            this.#namesTo(),
            'too many entries could not be removed; the rest of this directory was left',
          );
          top.gaveUp = true;
          break;
        }
      }
    } catch (error) {
      this.#fail(this.#namesTo(), `listing failed (${errorCode(error)})`);
      top.gaveUp = true;
    } finally {
      listing.closeSync();
    }
    return false;
  }

  /** Everything removable at this level is gone: the directory itself is removed by name in its parent. */
  removeLevel(top: Frame): void {
    this.stack.pop();
    fs.closeSync(top.fd);
    const parent = this.stack[this.stack.length - 1];
    const emptied = top.failed.size === 0 && !top.gaveUp;
    if (!emptied) {
      parent?.failed.add(top.name.toString('latin1'));
      return;
    }
    try {
      fs.rmdirSync(childPath(parent?.fd ?? this.#parentFd, top.name));
      this.report.removedEntries++;
      if (parent === undefined) this.report.removed = true;
    } catch (error) {
      const code = errorCode(error);
      if (code === 'ENOENT' && parent === undefined) this.report.removed = true;
      else if (code !== 'ENOENT') {
        this.#fail(
          [...this.#namesTo(), top.name],
          code === 'ENOTEMPTY' ? 'replaced during removal (not empty)' : code,
        );
        parent?.failed.add(top.name.toString('latin1'));
      }
    }
  }

  /**
   * Unlinks `entry` of `top`: `entered` when it had become a directory after it was listed and was
   * entered instead (EISDIR), `vanished` when it was gone already; else undefined (unlinked, or failed
   * and remembered as such).
   */
  #unlink(top: Frame, entry: Buffer): 'entered' | 'vanished' | undefined {
    try {
      fs.unlinkSync(childPath(top.fd, entry));
      this.report.removedEntries++;
    } catch (error) {
      const code = errorCode(error);
      if (code === 'ENOENT') return 'vanished';
      // A name that became a directory after it was listed (EISDIR), entered like any directory.
      if (code === 'EISDIR' && this.#enter(top, entry) === true) return 'entered';
      if (code !== 'EISDIR') this.#fail(this.#namesTo(entry), code);
      top.failed.add(entry.toString('latin1'));
    }
    return undefined;
  }

  /** Enters `entry` of `top` when it is a directory on the same device; false when it is not a directory. */
  #enter(top: Frame, entry: Buffer): boolean | 'failed' {
    let fd: number;
    try {
      fd = openDirectoryAt(top.fd, entry);
    } catch (error) {
      const code = errorCode(error);
      if (code === 'ENOTDIR' || code === 'ELOOP') return false;
      if (code === 'ENOENT') return 'failed';
      this.#fail(this.#namesTo(entry), code);
      top.failed.add(entry.toString('latin1'));
      return 'failed';
    }
    const stat = fs.fstatSync(fd);
    if (stat.dev !== top.dev) {
      fs.closeSync(fd);
      this.#fail(this.#namesTo(entry), 'mount point (another file system is never emptied)');
      top.failed.add(entry.toString('latin1'));
      return 'failed';
    }
    this.stack.push({ fd, name: entry, dev: stat.dev, failed: new Set(), gaveUp: false });
    return true;
  }

  #fail(names: Buffer[], reason: string): void {
    if (this.report.failures.length < this.#maxReported)
      this.report.failures.push({ path: displayPath(names), reason });
    else this.report.unlistedFailures++;
  }

  #namesTo(last?: Buffer): Buffer[] {
    return [...this.stack.map((frame) => frame.name), ...(last ? [last] : [])];
  }
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
