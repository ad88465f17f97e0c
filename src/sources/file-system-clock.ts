import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * The clean moment of digest reuse (local-file/baseline-digests.ts), read from the file system's own
 * clock: Witness creates a fresh file in a directory of its own, on the same file system as the surface,
 * right after the baseline manifest is complete, and takes that file's ctime. A file whose ctime is
 * strictly older than this moment was last changed before it, hence before the agent could start.
 *
 * Why the file system's clock and not Date.now(): file timestamps are the kernel's coarse clock cut to
 * the file system's granularity (a jiffy, a second on some), so only a timestamp taken the same way is
 * comparable; a finer reading could fall after a write stamped in the same tick and let it be reused.
 *
 * The mark is trusted for digest reuse only on file systems whose ctime the local kernel maintains
 * ({@link LOCAL_CTIME_FILE_SYSTEMS}); on a network or FUSE file system a server decides ctime, so every file
 * is re-read there. It also assumes the host's real-time clock is not stepped back during the attempt:
 * {@link checkClockSince} refuses digest reuse when it was (compared with the monotonic clock), and no
 * process in the sandbox can step it once capabilities are dropped (CAP_SYS_TIME).
 *
 * @example
 * const mark = markFileSystemClock(runDirectory); // after the baseline, before the agent starts
 * const final = await source.acquireManifest({ reuseDigestsFrom: { baseline, mark } });
 */

/** statfs(2) magic numbers of local file systems whose ctime is set by this kernel's clock. */
export const LOCAL_CTIME_FILE_SYSTEMS = {
  ext4: 0xef53, // ext2, ext3 and ext4 share it
  xfs: 0x58465342,
  btrfs: 0x9123683e,
  tmpfs: 0x01021994,
  f2fs: 0xf2f52010,
  zfs: 0x2fc12fc1,
  // Copy-up gives a changed file a new upper inode, stamped by the same kernel clock.
  overlayfs: 0x794c7630,
} as const;

export type LocalCtimeFileSystem = keyof typeof LOCAL_CTIME_FILE_SYSTEMS;

export interface ClockMark {
  /** The directory the marker file was created (and removed) in. */
  directory: string;
  /** Device of the marker: digest reuse only applies to files on this device. */
  dev: number;
  /** The file system's name when it is one of {@link LOCAL_CTIME_FILE_SYSTEMS}, else null (no digest reuse). */
  fileSystem: LocalCtimeFileSystem | null;
  /** statfs(2) type of the directory's file system. */
  fileSystemType: number;
  /** The marker's ctime, ms as Node reports it: the clean moment. */
  ctimeMs: number;
  /** The monotonic clock (performance.now()) just after the marker was created, to detect clock steps. */
  monotonicMs: number;
}

/**
 * Creates a fresh file (O_EXCL, never following a link) in `directory`, reads its ctime and file system,
 * and removes it. Throws the file-system error when the directory is not writable; the caller then
 * simply reads every file (no digest reuse).
 *
 * The monotonic reading must be taken close to the moment the kernel stamped the marker: a process
 * descheduled between the two (a loaded machine) would otherwise look like a clock that went back by the
 * delay, and {@link checkClockSince} would decline a sound digest reuse — or, on the first mark, a long
 * delay would widen the step it can miss. So the stamp is bracketed by two monotonic readings and taken
 * again (a fresh marker) while the bracket is wider than {@link MARK_BRACKET_MS}; after
 * {@link MARK_ATTEMPTS} tries the last one is used, and a wide bracket only ever makes the check decline
 * (read every file), never reuse more.
 */
export function markFileSystemClock(directory: string): ClockMark {
  let mark = stampMarker(directory);
  for (let attempt = 1; attempt < MARK_ATTEMPTS && mark.bracketMs > MARK_BRACKET_MS; attempt++) {
    mark = stampMarker(directory);
  }
  const type = Number(fs.statfsSync(directory).type);
  const known = (Object.entries(LOCAL_CTIME_FILE_SYSTEMS) as Array<[LocalCtimeFileSystem, number]>).find(
    ([, magic]) => magic === type,
  );
  return {
    directory,
    dev: mark.stat.dev,
    fileSystem: known?.[0] ?? null,
    fileSystemType: type,
    ctimeMs: mark.stat.ctimeMs,
    monotonicMs: mark.monotonicMs,
  };
}

/** Widest accepted gap between the monotonic readings around a marker's creation. */
const MARK_BRACKET_MS = 5;
const MARK_ATTEMPTS = 8;

function stampMarker(directory: string): { stat: fs.Stats; monotonicMs: number; bracketMs: number } {
  const marker = path.join(directory, `.witness-clock-${randomUUID()}`);
  const flags = fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY | fs.constants.O_NOFOLLOW;
  const before = performance.now();
  const fd = fs.openSync(marker, flags, 0o600);
  try {
    const monotonicMs = performance.now();
    return { stat: fs.fstatSync(fd), monotonicMs, bracketMs: monotonicMs - before };
  } finally {
    fs.closeSync(fd);
    fs.rmSync(marker, { force: true });
  }
}

/**
 * Allowed drift between the file system's clock and the monotonic clock: two coarse stamps (a jiffy is
 * at most 10 ms) plus NTP slewing (at most 500 ppm of the elapsed time). A step back beyond it refuses
 * digest reuse.
 */
const STEP_TOLERANCE_MS = 25;
const SLEW_RATIO = 0.0005;

/**
 * Whether `mark` can still vouch for digest reuse now: the directory is still on the same device and its
 * file system's clock did not go back since the mark (a second marker is stamped and compared with the
 * monotonic clock). Returns the reason when it cannot.
 */
export function checkClockSince(mark: ClockMark): { ok: true } | { ok: false; reason: string } {
  if (mark.fileSystem === null) {
    return {
      ok: false,
      reason: `the file system (statfs type 0x${mark.fileSystemType.toString(16)}) does not keep ctime by this kernel's clock`,
    };
  }
  let now: ClockMark;
  try {
    now = markFileSystemClock(mark.directory);
  } catch (error) {
    return { ok: false, reason: `the clock could not be read again (${(error as Error).message})` };
  }
  if (now.dev !== mark.dev) return { ok: false, reason: 'the marker directory moved to another device' };
  const realElapsed = now.ctimeMs - mark.ctimeMs;
  const monotonicElapsed = now.monotonicMs - mark.monotonicMs;
  if (realElapsed < monotonicElapsed * (1 - SLEW_RATIO) - STEP_TOLERANCE_MS) {
    return {
      ok: false,
      reason: `the clock went back by about ${Math.round(monotonicElapsed - realElapsed)} ms since the baseline (stepped)`,
    };
  }
  return { ok: true };
}
