import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { platform } from 'node:os';
import { join } from 'node:path';
import { InvalidOptionError } from '../errors.js';
import type { AgentUser } from './agent-user.js';
import { processesOfUid } from './process-scan.js';

/**
 * A uid of its own for each attempt run with `sandbox: none` while Witness is root (SPEC §13: "one uid per
 * concurrent attempt from a range"). Without a sandbox, concurrent attempts share one view of the file
 * system and one PID space: with a single agent uid, attempt A's agent could write into attempt B's
 * workspace (it owns it too), signal B's processes and read their `/proc/PID/cwd` and `environ`. With a
 * uid each, B's workspace, home and tmp (0700, owned by B's uid) and B's processes are out of A's reach,
 * and every process still running as A's uid when A ends is A's (nothing ran as it when A took it), so it
 * is found and killed wherever it went — no cgroup needed.
 *
 * The pool is the campaign's `runAs:` (a range `FIRST-LAST`, or one uid: then one attempt at a time), or
 * by default {@link DEFAULT_UID_POOL}: uids in a block no distribution or systemd assigns, each skipped
 * when `/etc/passwd` or `/etc/group` names it (an account's uid may have a scheduler — cron, at, a user
 * manager — that starts processes as it later, which would outlive the attempt's kill).
 *
 * A lease is an exclusive `flock(2)` on a file named after the uid in a root-only directory: machine-wide
 * (two `witness run`s, queue workers on one host), dropped by the kernel when the holder dies. A uid is
 * leased only when its lock is free and no process runs as it.
 */

export interface UidPool {
  first: number;
  last: number;
  /** True for the default pool: uids that an account names are skipped. */
  skipAccounts: boolean;
  /** How the pool was given, for messages (`runAs: 2000-2063`, `the default pool …`). */
  source: string;
}

/** 0x70000000 …: systemd's UIDS-GIDS table lists 1879048192–2147352575 as unused (after container ranges). */
export const DEFAULT_UID_POOL: UidPool = Object.freeze({
  first: 1_879_048_192,
  last: 1_879_049_215,
  skipAccounts: true,
  source: "the default pool of agent uids 1879048192-1879049215 (set another with runAs: 'FIRST-LAST')",
});

export interface UidLease {
  readonly user: AgentUser;
  /** Kills every process running as the uid (the attempt's), then frees the uid; idempotent. */
  release(): void;
}

/** Where the uid locks live: root-only, at a fixed path (TMPDIR may differ between Witness processes). */
const LOCK_DIRECTORIES = ['/run/witness-agent-uids', '/tmp/witness-agent-uids'];

/**
 * Takes a uid of the pool for one attempt. Throws an {@link InvalidOptionError} naming the fix when every
 * uid is taken or in use (more attempts at once than the pool holds).
 */
export function leaseUid(pool: UidPool): UidLease {
  const locks = lockDirectory();
  const accounts = pool.skipAccounts ? accountIds() : new Set<number>();
  let busy = 0;
  for (let uid = pool.first; uid <= pool.last; uid++) {
    if (accounts.has(uid)) continue;
    const fd = openSync(
      join(locks, `${uid}.lock`),
      constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW,
      0o600,
    );
    if (!tryLock(fd)) {
      closeSync(fd);
      busy++;
      continue;
    }
    // A process already running as the uid is not this attempt's: it could reach the attempt's files.
    if (processesOfUid(uid).length > 0) {
      closeSync(fd);
      busy++;
      continue;
    }
    let released = false;
    return {
      user: { uid, gid: uid },
      release() {
        if (released) return;
        released = true;
        killUid(uid);
        heldHere.delete(identity(fd));
        closeSync(fd);
      },
    };
  }
  throw new InvalidOptionError(
    `no agent uid is free for this attempt: ${busy} of ${pool.source} are taken by other attempts or in use ` +
      'by running processes. Under sandbox: none each attempt running at once needs a uid of its own: lower ' +
      "the concurrency, or give a wider range with runAs: 'FIRST-LAST' (uids nothing else runs as)",
  );
}

/** Kills every process running as `uid` (rounds, so a fork during one is caught by the next). */
export function killUid(uid: number): boolean {
  for (let round = 0; round < 20; round++) {
    const found = processesOfUid(uid);
    if (found.length === 0) return true;
    for (const pid of found) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
  return processesOfUid(uid).length === 0;
}

function lockDirectory(): string {
  let lastError: Error | undefined;
  for (const path of LOCK_DIRECTORIES) {
    try {
      mkdirSync(path, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        lastError = error as Error;
        continue;
      }
    }
    // Anyone else's directory (made in /tmp before us) could hold or swap the locks.
    const stats = lstatSync(path);
    if (stats.isDirectory() && stats.uid === 0 && (stats.mode & 0o077) === 0) return path;
    lastError = new Error(`${path} is not a directory of root's with mode 0700`);
  }
  throw new InvalidOptionError(
    `the agent uid locks have no safe directory (${lastError?.message ?? 'none'}): remove what is at ` +
      `${LOCK_DIRECTORIES.join(' or ')}, and Witness makes it again`,
  );
}

/** Every uid and gid an account or group names. */
function accountIds(): Set<number> {
  const ids = new Set<number>();
  for (const file of ['/etc/passwd', '/etc/group']) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n')) {
      const id = Number(line.split(':')[2]);
      if (line !== '' && Number.isSafeInteger(id)) ids.add(id);
    }
  }
  return ids;
}

type Flock = (fd: number, operation: number) => number;
let flock: Flock | { reason: string } | undefined;

const LOCK_EX = 2;
const LOCK_NB = 4;

/**
 * The exclusive lock without waiting. koffi reaches flock(2) (Node has no binding); where it cannot, the
 * lock file is still opened, and uniqueness holds within this process only (by the file's identity).
 */
function tryLock(fd: number): boolean {
  flock ??= loadFlock();
  if (typeof flock === 'function') return flock(fd, LOCK_EX | LOCK_NB) === 0;
  const key = identity(fd);
  if (heldHere.has(key)) return false;
  heldHere.add(key);
  return true;
}

/** Lock files held by this process, where flock cannot be had. */
const heldHere = new Set<string>();

function identity(fd: number): string {
  const { dev, ino } = fstatSync(fd);
  return `${dev}:${ino}`;
}

function loadFlock(): Flock | { reason: string } {
  if (platform() !== 'linux') return { reason: 'Linux only' };
  try {
    const koffi = createRequire(import.meta.url)('koffi') as {
      load(path: null): { func(signature: string): (...args: unknown[]) => unknown };
    };
    const call = koffi.load(null).func('int flock(int fd, int operation)');
    return (fd, operation) => Number(call(fd, operation));
  } catch (error) {
    return { reason: (error as Error).message };
  }
}
