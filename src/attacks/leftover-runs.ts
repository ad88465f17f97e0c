import {
  closeHandle,
  openOwnDirectory,
  type RemovalReport,
  readSmallFileAt,
  removeTree,
} from '../sources/confined-fs.js';
import { claimOwnerLock, listOwnedDirectories, type OwnedDirectory } from './owned-directories.js';
import { RUN_DIRECTORY_PREFIX, RUN_MARKER } from './workspace.js';

/**
 * Run directories left behind by runs that were killed before their cleanup (`witness clean`). A run
 * directory is recognised by its name prefix, by being a real directory (not a symlink someone planted in
 * the shared temp directory) owned by the current user, and by its marker file. One is in use, and left
 * alone, while a live process holds its owner lock (a worker's run directory) or has the pid its marker
 * names (a reused pid only keeps a dead run's directory longer).
 */

export interface LeftoverRun {
  path: string;
  /** The process that created it (from the marker), when known. */
  pid: number | null;
  createdAt: string | null;
  /** The owner process is alive: the run is still going. */
  inUse: boolean;
}

export interface CleanedRun {
  path: string;
  report: RemovalReport;
}

export function findLeftoverRuns(input: {
  parent: string;
  /** The caller's uid: only its own run directories are considered. */
  uid: number;
  isAlive: (pid: number) => boolean;
}): LeftoverRun[] {
  const runs: LeftoverRun[] = [];
  for (const directory of listOwnedDirectories(input.parent, input.uid, (name) =>
    name.startsWith(RUN_DIRECTORY_PREFIX),
  )) {
    const { path } = directory;
    const marker = readMarker(path);
    if (marker === undefined) continue;
    runs.push({
      path,
      ...marker,
      inUse: ownerLockHeld(directory) || (marker.pid !== null && input.isAlive(marker.pid)),
    });
  }
  return runs;
}

/**
 * Whether a live process holds the directory's owner lock (a worker's run directory holds it for its
 * lifetime; directory-lock.ts). The lock is only tried, and let go at once.
 */
function ownerLockHeld(directory: OwnedDirectory): boolean {
  const owner = claimOwnerLock(directory);
  if (owner.state === 'claimed') owner.release();
  return owner.state === 'held';
}

/** Removes every leftover run not in use; each removal is reported, none throws. */
export function cleanLeftoverRuns(runs: readonly LeftoverRun[]): CleanedRun[] {
  return runs.filter((run) => !run.inUse).map((run) => ({ path: run.path, report: removeTree(run.path) }));
}

function readMarker(path: string): { pid: number | null; createdAt: string | null } | undefined {
  let fd: number;
  try {
    fd = openOwnDirectory(path);
  } catch {
    return undefined;
  }
  try {
    // Bounded, and never from a FIFO or device planted at the marker's name (it would block or act).
    const { bytes } = readSmallFileAt(fd, RUN_MARKER, 10_000);
    const parsed = JSON.parse(bytes.toString('utf8')) as { pid?: unknown; createdAt?: unknown };
    return {
      pid: Number.isSafeInteger(parsed.pid) && (parsed.pid as number) > 0 ? (parsed.pid as number) : null,
      createdAt: typeof parsed.createdAt === 'string' ? parsed.createdAt : null,
    };
  } catch {
    return undefined;
  } finally {
    closeHandle(fd);
  }
}
