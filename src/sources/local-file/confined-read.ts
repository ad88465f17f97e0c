import type { CoverageGap } from '../../models/observation.js';
import type { AcquisitionState } from './acquisition-state.js';
import { errorCode, rethrowCancelled } from './acquisition-state.js';
import { placeHandle } from './confinement.js';
import type { SurfaceFs } from './surface-fs.js';

/**
 * Reads one candidate file under the confinement rules of SPEC §5 and §5.1:
 *
 * 1. Open `name` relative to its parent's handle as O_PATH (openat2 seam: its path beneath the ROOT
 *    handle, RESOLVE_BENEATH). An O_PATH open has no driver or FIFO side effects, so even an outside FIFO
 *    or device reached through a link is never opened with read intent.
 * 2. Ask the kernel where that handle is; outside the root (or unknowable) → a gap, no byte read. With
 *    the openat2 seam the kernel already refused every resolution leaving the root while opening, so a
 *    regular file it proved needs no second look.
 * 3. fstat the handle: not a regular file → a gap, nothing read.
 * 4. Reserve the file's share of maxReadBytes (from that fstat), in enumeration order.
 * 5. The reader (reserved-read.ts) reopens through the handle (never by name, so a swap after the check
 *    cannot redirect the read), O_NONBLOCK, checks the reopened handle is the same regular file
 *    (dev/ino), and takes time and bytes from it, within the reservation.
 * 6. Close every handle on every path, on the thread that opened it.
 *
 * Steps 1–6 run on whichever reader thread takes the candidate (read-lanes.ts): the walking thread, or
 * the acquisition's second reader. Both run the same {@link checkCandidate} with their own instance of
 * the same seam kind, the same root handle and the same root path, so the checks do not depend on the
 * thread; the reservation of step 4 is made in enumeration order whichever thread makes it (a shared
 * ticket), so neither do the budget cuts.
 */

export type CandidateResult = 'read' | 'absent' | 'gap';

/** A candidate as the walk meets it: nothing is opened yet. */
export interface CandidateRef {
  /** Position in enumeration order: orders this candidate's gaps and its reservation. */
  seq: number;
  /** The parent directory's handle (held open by the walk until every candidate in it is done). */
  dirFd: number;
  name: Buffer;
  uri: string;
  /** Its path below the root handle, when the walk's seam has one (openat2 seam; see pathBeneathRoot). */
  beneath: Buffer | undefined;
}

/** What a thread needs to check candidates: its seam, the acquisition's root handle and root path. */
export interface CheckContext {
  readonly fs: Pick<
    SurfaceFs,
    'openPathAt' | 'openPathBeneath' | 'provenInside' | 'handlePath' | 'fstat' | 'lstatAt' | 'close'
  >;
  readonly rootFd: number;
  readonly rootPath: Buffer;
  gap(seq: number, gap: CoverageGap): void;
}

/** A candidate that passed steps 1–3: its O_PATH handle (the checking thread's to close) and fstat. */
export interface CheckedCandidate {
  pathFd: number;
  size: number;
  dev: number;
  ino: number;
}

/** The walk's entry point: one candidate, handed to the acquisition's read lanes. */
export function readCandidate(
  state: AcquisitionState,
  dirFd: number,
  name: Buffer,
  uri: string,
): CandidateResult {
  state.checkCancelled();
  return state.lanes.hand({
    seq: state.nextTaskSeq(),
    dirFd,
    name,
    uri,
    beneath: state.fs.pathBeneathRoot?.(state.rootFd, dirFd, name),
  });
}

/**
 * Steps 1–3. Returns the checked handle, or 'absent' / 'gap' (the gap recorded under `ref.seq`) with
 * every handle closed.
 */
export function checkCandidate(ctx: CheckContext, ref: CandidateRef): CheckedCandidate | 'absent' | 'gap' {
  const { fs } = ctx;
  let pathFd: number | undefined;
  try {
    if (ref.beneath !== undefined) pathFd = fs.openPathBeneath?.(ctx.rootFd, ref.beneath);
    pathFd ??= fs.openPathAt(ref.dirFd, ref.name);
  } catch (error) {
    rethrowCancelled(error);
    return openFailed(ctx, ref, error);
  }
  let kept = false;
  try {
    // A regular file the kernel proved beneath the root at open time (openat2, RESOLVE_BENEATH from the
    // root handle) is strictly inside it: the root is a directory, so a file cannot be the root itself.
    // Anything else (procfs seam, or a proven handle that is a directory, which may be the root) is
    // placed by the kernel's path for the handle, before any read intent.
    let pathStat = fs.provenInside(pathFd) ? fs.fstat(pathFd) : undefined;
    if (pathStat === undefined || !pathStat.isFile()) {
      const placement = placeHandle(fs, pathFd, ctx.rootPath);
      if (placement.kind === 'unverified') {
        gap(ctx, ref, 'confinement_unverified', placement.detail);
        return 'gap';
      }
      if (placement.kind === 'outside') {
        gap(ctx, ref, 'link_outside_root', 'the link resolves outside the root; nothing was read');
        return 'gap';
      }
      pathStat ??= fs.fstat(pathFd);
    }
    if (!pathStat.isFile()) {
      gap(ctx, ref, 'not_a_file', describeKind(pathStat));
      return 'gap';
    }
    kept = true;
    return { pathFd, size: pathStat.size, dev: pathStat.dev, ino: pathStat.ino };
  } finally {
    if (!kept) fs.close(pathFd);
  }
}

function gap(ctx: CheckContext, ref: CandidateRef, reason: CoverageGap['reason'], detail: string): void {
  ctx.gap(ref.seq, { reason, uri: ref.uri, detail });
}

function openFailed(ctx: CheckContext, ref: CandidateRef, error: unknown): 'absent' | 'gap' {
  const code = errorCode(error);
  if (code === 'ENOENT') {
    let isLink = false;
    try {
      isLink = ctx.fs.lstatAt(ref.dirFd, ref.name).isSymbolicLink();
    } catch (lstatError) {
      rethrowCancelled(lstatError);
      // Gone entirely: the path holds nothing.
    }
    if (!isLink) return 'absent';
    gap(ctx, ref, 'dangling_link', 'the symbolic link points at nothing');
    return 'gap';
  }
  gap(ctx, ref, 'read_failed', `open failed (${code})`);
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
