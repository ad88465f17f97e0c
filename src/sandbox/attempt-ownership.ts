import {
  closeSync,
  constants,
  fchmodSync,
  fchownSync,
  fstatSync,
  lchownSync,
  openSync,
  readdirSync,
} from 'node:fs';
import { basename, dirname } from 'node:path';
import { childPath, fdPath } from '../sources/confined-fs.js';
import type { AgentUser } from './agent-user.js';
import type { HeldDirectory } from './contained-process.js';

/**
 * Hands an attempt's directories over to the agent's own user (SPEC §13) before the attempt's baseline:
 * the workspace (the template's copy and the planted files), the home (the preset's configuration in it)
 * and the attempt's temp directory become the user's, so an agent that is not root can work in them as it
 * would in its own checkout — and an agent that rewrites its preset's settings can (that is a change it
 * made, and it is judged).
 *
 * The walk is by handle, never follows a symbolic link (a link is re-owned itself, `lchown`), and never
 * leaves the tree it was given. It runs before any agent of the attempt does, in a run directory only
 * Witness can enter (the sandbox mounts the directories from their handles: the run directory above them
 * stays 0700, Witness's). Ownership is not part of the manifest, so it does not show as a change.
 */

export interface OwnedAttempt {
  workspace: HeldDirectory;
  home: HeldDirectory;
  tmp?: HeldDirectory | undefined;
  /** The run directory holding the attempt's directory (`RUN/attempt-…/{workspace,home,tmp}`). */
  runPath?: string | undefined;
}

/**
 * `sandbox: none` (`reachable: true`): the agent reaches its directories by their host paths, so the run
 * directory and the attempt's directory (root's, never the agent's: it must not rename what is judged)
 * become searchable but not listable (0711), and the workspace, home and tmp are the agent's alone (0700):
 * another attempt's agent, another uid, can neither enter nor list them.
 */
export function handOverAttempt(attempt: OwnedAttempt, user: AgentUser, reachable = false): void {
  const roots = [attempt.workspace, attempt.home, ...(attempt.tmp === undefined ? [] : [attempt.tmp])];
  const seen = new Set<number>();
  for (const root of roots) {
    if (seen.has(root.fd)) continue;
    seen.add(root.fd);
    chownTree(root.fd, user);
  }
  if (reachable) {
    for (const root of roots) fchmodSync(root.fd, 0o700);
    openParents(attempt);
    return;
  }
  // bubblewrap enters the workspace (`--chdir`) as uid 0 without capabilities, before it becomes the
  // agent's user: uid 0 then has no more right to enter a directory of someone else's than any user.
  fchmodSync(attempt.workspace.fd, 0o755);
}

/**
 * Makes the run directory and the attempt's directory searchable (0711), when the attempt lies in the
 * run directory as the runner makes it (a workspace given by a caller keeps its parents as they are).
 */
function openParents(attempt: OwnedAttempt): void {
  const parent = dirname(attempt.workspace.path);
  const inRun =
    attempt.runPath !== undefined &&
    dirname(parent) === attempt.runPath &&
    basename(parent).startsWith('attempt-') &&
    dirname(attempt.home.path) === parent;
  if (!inRun) return;
  for (const directory of [attempt.runPath as string, parent]) {
    const fd = openSync(directory, OPEN_DIRECTORY);
    try {
      fchmodSync(fd, 0o711);
    } finally {
      closeSync(fd);
    }
  }
}

/** True when the held directory is the user's already (handed over by an earlier step). */
export function ownedBy(directory: HeldDirectory, user: AgentUser): boolean {
  const stats = fstatSync(directory.fd);
  return stats.uid === user.uid && stats.gid === user.gid;
}

const OPEN_DIRECTORY = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** Re-owns the directory held by `rootFd` and everything beneath it; one directory handle per level. */
function chownTree(rootFd: number, user: AgentUser): void {
  fchownSync(rootFd, user.uid, user.gid);
  const walk = (fd: number) => {
    for (const entry of readdirSync(fdPath(fd), {
      withFileTypes: true,
      encoding: 'buffer',
    })) {
      const path = childPath(fd, entry.name);
      lchownSync(path, user.uid, user.gid);
      if (!entry.isDirectory()) continue;
      const child = openSync(path, OPEN_DIRECTORY);
      try {
        walk(child);
      } finally {
        closeSync(child);
      }
    }
  };
  walk(rootFd);
}
