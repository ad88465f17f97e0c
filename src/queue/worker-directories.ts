import { listOwnedDirectories } from '../attacks/owned-directories.js';
import { type RemovalReport, removeTree } from '../sources/local-file/confined-removal.js';

/**
 * A worker writes each run's campaign files into a private directory named after its process,
 * `witness-worker-<pid>-XXXXXX`, and removes it when it stops. A worker killed with SIGKILL (or whose
 * machine rebooted into the same temp directory) cannot; the next worker started there sweeps what dead
 * workers left, as `witness clean` does for run directories.
 *
 * What is swept, and what it refuses: only real directories (an attacker's symlink named like one, planted
 * in the shared temp directory to make a worker delete its target, is not followed and not touched), owned
 * by the worker's own user (another user's worker directory is theirs), whose name parses to a pid that is
 * not alive (a running worker's directory is in use; a reused pid only keeps a directory longer). Removal
 * is confined: it never follows a symlink inside the tree.
 */

export const WORKER_DIRECTORY_PREFIX = 'witness-worker-';
const WORKER_DIRECTORY_NAME = /^witness-worker-([1-9][0-9]{0,9})-[A-Za-z0-9]{6}$/;

/** The `mkdtemp` prefix of a directory owned by this process id. */
export function workerDirectoryPrefix(pid: number): string {
  return `${WORKER_DIRECTORY_PREFIX}${pid}-`;
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
  const pidOf = (name: string) => Number(WORKER_DIRECTORY_NAME.exec(name)?.[1]);
  const swept: SweptDirectory[] = [];
  for (const { name, path, stats } of listOwnedDirectories(input.parent, input.uid, (name) =>
    WORKER_DIRECTORY_NAME.test(name),
  )) {
    const pid = pidOf(name);
    if (!Number.isSafeInteger(pid) || pid <= 0 || input.isAlive(pid)) continue;
    swept.push({ path, pid, report: removeTree(path, { expected: { dev: stats.dev, ino: stats.ino } }) });
  }
  return swept;
}
