import type { Stats } from 'node:fs';
import { type AcquisitionState, errorCode, rethrowCancelled } from './acquisition-state.js';
import { placeHandle } from './confinement.js';
import type { ReadTask } from './reserved-read.js';

/**
 * Reads one candidate file under the confinement rules of SPEC §5 and §5.1:
 *
 * 1. Open `name` relative to its parent's handle as O_PATH. An O_PATH open has no driver or FIFO side
 *    effects, so even an outside FIFO or device reached through a link is never opened with read intent.
 * 2. Ask the kernel where that handle is; outside the root (or unknowable) → a gap, no byte read. With
 *    the openat2 seam the kernel already refused every resolution leaving the root while opening, so a
 *    regular file it proved needs no second look.
 * 3. fstat the handle: not a regular file → a gap, nothing read.
 * 4. Reopen through the handle (never by name, so a swap after the check cannot redirect the read),
 *    O_NONBLOCK, fstat it and check it is the same regular file (dev/ino), then take size, time and
 *    bytes from that one handle.
 * 5. Reserve the file's share of maxReadBytes, in enumeration order, and hand the read handle to a reader
 *    (reserved-read.ts): this thread, or the acquisition's second reader thread (read-lanes.ts).
 * 6. Close every handle on every path (a handed-off read handle is closed by the reader that took it).
 */

export type CandidateResult = 'read' | 'absent' | 'gap';

export function readCandidate(
  state: AcquisitionState,
  dirFd: number,
  name: Buffer,
  uri: string,
): CandidateResult {
  state.checkCancelled();
  const { fs } = state;
  let pathFd: number;
  try {
    pathFd = fs.openPathAt(dirFd, name);
  } catch (error) {
    rethrowCancelled(error);
    return openFailed(state, dirFd, name, uri, error);
  }
  try {
    // A regular file the kernel proved beneath the root at open time (openat2, RESOLVE_BENEATH from the
    // root handle) is strictly inside it: the root is a directory, so a file cannot be the root itself.
    // Anything else (procfs seam, or a proven handle that is a directory, which may be the root) is
    // placed by the kernel's path for the handle, before any read intent.
    let pathStat = fs.provenInside(pathFd) ? fs.fstat(pathFd) : undefined;
    if (pathStat === undefined || !pathStat.isFile()) {
      const placement = placeHandle(fs, pathFd, state.rootPath);
      if (placement.kind === 'unverified') {
        state.gap('confinement_unverified', uri, placement.detail);
        return 'gap';
      }
      if (placement.kind === 'outside') {
        state.gap('link_outside_root', uri, 'the link resolves outside the root; nothing was read');
        return 'gap';
      }
      pathStat ??= fs.fstat(pathFd);
    }
    if (!pathStat.isFile()) {
      state.gap('not_a_file', uri, describeKind(pathStat));
      return 'gap';
    }
    let readFd: number;
    try {
      readFd = fs.reopenForRead(pathFd);
    } catch (error) {
      rethrowCancelled(error);
      state.gap('read_failed', uri, `open for reading failed (${errorCode(error)})`);
      return 'gap';
    }
    let task: ReadTask | undefined;
    try {
      task = checkReopened(state, readFd, pathStat, uri);
    } finally {
      if (task === undefined) fs.close(readFd);
    }
    if (task === undefined) return 'gap';
    // From here the read handle belongs to the lanes, which close it once it is read (or not read).
    return state.lanes.hand(task);
  } finally {
    fs.close(pathFd);
  }
}

/**
 * The reopened handle must be the regular file that was checked (same dev/ino): otherwise a gap and no
 * byte read. Then the file's share of the read budget is reserved, here on the walking thread, in
 * enumeration order, and the task that a reader runs is built.
 */
function checkReopened(
  state: AcquisitionState,
  fd: number,
  pathStat: { dev: number; ino: number },
  uri: string,
): ReadTask | undefined {
  let stat: Stats;
  try {
    stat = state.fs.fstat(fd);
  } catch (error) {
    rethrowCancelled(error);
    state.gap('read_failed', uri, `fstat failed (${errorCode(error)})`);
    return undefined;
  }
  if (!stat.isFile() || stat.dev !== pathStat.dev || stat.ino !== pathStat.ino) {
    state.gap('confinement_unverified', uri, 'the reopened handle is not the checked file');
    return undefined;
  }
  state.stats.filesRead++;
  return {
    seq: state.nextTaskSeq(),
    fd,
    uri,
    size: stat.size,
    mtimeMs: stat.mtimeMs,
    reservation: state.reserve(stat.size),
  };
}

function openFailed(
  state: AcquisitionState,
  dirFd: number,
  name: Buffer,
  uri: string,
  error: unknown,
): CandidateResult {
  const code = errorCode(error);
  if (code === 'ENOENT') {
    let isLink = false;
    try {
      isLink = state.fs.lstatAt(dirFd, name).isSymbolicLink();
    } catch (lstatError) {
      rethrowCancelled(lstatError);
      // Gone entirely: the path holds nothing.
    }
    if (!isLink) return 'absent';
    state.gap('dangling_link', uri, 'the symbolic link points at nothing');
    return 'gap';
  }
  state.gap('read_failed', uri, `open failed (${code})`);
  return 'gap';
}

function describeKind(stat: {
  isDirectory(): boolean;
  isFIFO(): boolean;
  isSocket(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
}): string {
  if (stat.isDirectory()) return 'a directory';
  if (stat.isFIFO()) return 'a FIFO';
  if (stat.isSocket()) return 'a socket';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  return 'not a regular file';
}
