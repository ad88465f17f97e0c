import { describeNonFile } from '../confined-fs/file-stat.js';
import { errorCode, rethrowCancelled } from '../confined-fs/fs-errors.js';
import { placeHandle } from '../confined-fs/placement.js';
import type { AcquisitionState } from './acquisition-state.js';
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
 * 4. Reserve the file's share of maxReadBytes (from that fstat), in enumeration order, and hand the
 *    handle to a reader: this thread, or the acquisition's second reader thread (read-lanes.ts).
 * 5. The reader (reserved-read.ts) reopens through the handle (never by name, so a swap after the check
 *    cannot redirect the read), O_NONBLOCK, checks the reopened handle is the same regular file
 *    (dev/ino), and takes time and bytes from it, within the reservation.
 * 6. Close every handle on every path: the read handle by the reader that opened it, the O_PATH handle
 *    on this thread (after the reader is done with it).
 */

/**
 * `not_regular`: only with `listedFile`, the name (opened without following it) is no longer a regular file:
 * nothing was recorded, and the caller decides by the name's lstat, as for any other listed name.
 */
export type CandidateResult = 'read' | 'absent' | 'gap' | 'not_regular';

/**
 * @param listedFile the name was listed as a regular file and must be read only as that: the O_PATH open
 * does not follow a symlink swapped in since the listing (a manifest that records links as links would
 * otherwise record the link's target as this name's file).
 */
export function readCandidate(
  state: AcquisitionState,
  dirFd: number,
  name: Buffer,
  uri: string,
  listedFile = false,
  /** The links followed to reach `uri` (resolve-beneath.ts), recorded on the entry. */
  via?: string,
): CandidateResult {
  state.checkCancelled();
  let pathFd: number;
  try {
    pathFd = state.fs.openPathAt(dirFd, name, listedFile);
  } catch (error) {
    rethrowCancelled(error);
    return openFailed(state, dirFd, name, uri, error);
  }
  return readOpenedCandidate(state, pathFd, uri, listedFile, via);
}

/**
 * Steps 2 to 6 for a candidate already opened as O_PATH (step 1): this function owns `pathFd` from here
 * and closes it, or submits it to a reader that does.
 */
export function readOpenedCandidate(
  state: AcquisitionState,
  pathFd: number,
  uri: string,
  listedFile = false,
  via?: string,
): CandidateResult {
  const { fs } = state;
  let submitted = false;
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
      if (listedFile) return 'not_regular';
      state.gap('not_a_file', uri, describeNonFile(pathStat));
      return 'gap';
    }
    // From here the O_PATH handle belongs to the lanes: a reader reopens it, and it is closed on this
    // thread once the reader is done with it.
    submitted = true;
    const task: ReadTask = {
      seq: state.nextTaskSeq(),
      pathFd,
      uri,
      size: pathStat.size,
      dev: pathStat.dev,
      ino: pathStat.ino,
      reservation: state.reserve(pathStat.size),
    };
    if (via !== undefined) task.via = via;
    return state.lanes.submit(task, pathStat);
  } finally {
    if (!submitted) fs.close(pathFd);
  }
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
