import type { ManifestEntry } from '../../models/manifest.js';
import type { EntryKind, EntryStat } from '../confined-fs/file-stat.js';
import { errorCode, rethrowCancelled } from '../confined-fs/fs-errors.js';
import { decodeName, escapeName } from '../confined-fs/names.js';
import { type AcquisitionState, EnumerationStopped } from './acquisition-state.js';
import type { ManifestRecorder } from './baseline-digests.js';
import { type CandidateResult, readCandidate } from './confined-read.js';
import type { ManifestReadLanes } from './manifest-reads.js';
import type { StatAhead } from './stat-ahead.js';

/**
 * Records one child met by the glob walk in manifest mode (SPEC §12). The walk itself is the source's:
 * listing by handle, each directory once, the listing budget, sorted output. Here each child becomes an
 * entry:
 *
 * - a directory: its permission bits; the walk descends into it.
 * - a symlink: its stored target, read with readlink on the parent's handle. It is never followed, so a
 *   link to `/etc` or to a FIFO costs nothing and reaches nothing outside the root.
 * - a regular file: read through the confined read (O_PATH, placement check, reopen through the handle),
 *   so its size and digest are those of the object checked inside the root, within the shared read budget
 *   (by this thread or the walk's second reader: manifest-reads.ts) — unless the walk reuses digests from a baseline and this file provably has not changed since
 *   (baseline-digests.ts): then the baseline's digest is its digest and nothing is opened.
 * - anything else (FIFO, socket, device): lstat only, never opened — a FIFO cannot stall the walk.
 *
 * Every child counts against maxFiles except directories (bounded by maxListedEntries already).
 * A manifest is taken when nothing in the sandbox runs (SPEC §11), so lstat and the read see one object.
 * A name the listing reports as a regular file, in a manifest that reuses nothing, is not lstat'ed
 * first: it goes straight to the confined read, and the fstat of the checked handle stands in for the
 * lstat (the same inode; the type check before any read intent is the confined read's own).
 */
export function recordManifestChild(
  state: AcquisitionState,
  dirFd: number,
  name: Buffer,
  uri: string,
  listed: EntryKind = 'unknown',
  ahead?: StatAhead,
): 'descend' | 'done' {
  const walk = state.recorder as ManifestRecorder;
  state.checkCancelled();
  if (listed === 'file' && !walk.reusesDigests) {
    // The listing says a regular file and nothing can be reused: the file is read at once, and the
    // fstat of the O_PATH handle the confined read checks (the very inode reopened and hashed) gives
    // its mode, size and key, in place of an lstat of the name (one system call per file fewer on the
    // walking thread). The read's checks are the confined read's own, unchanged.
    countEntry(state, uri);
    const entry: ManifestEntry = { uri, type: 'file', sizeBytes: 0, sha256: null, mode: 0, linkTarget: null };
    let result: CandidateResult = 'absent';
    const reads = state.manifestReads as ManifestReadLanes;
    // Opened without following a link: a name swapped for a symlink (or a FIFO, a directory) since the
    // listing is recorded by its lstat, as what it now is, never as its target's file.
    const read = () => {
      result = readCandidate(state, dirFd, name, uri, true);
    };
    if (reads.readFile(entry, undefined, read)) return 'done';
    if (result === 'absent' || result === 'not_regular') {
      // Not a file after all: the count is given back (the lstat below counts what the name now is).
      state.stats.candidates--;
      // Gone since it was listed: no entry, as when the lstat below finds nothing.
      if (result === 'absent') return 'done';
      return recordByStat(state, walk, dirFd, name, uri, true);
    }
    // Refused before any read intent (its gap says why): the entry is what the lstat of the name says.
    return recordByStat(state, walk, dirFd, name, uri, false);
  }
  return recordByStat(state, walk, dirFd, name, uri, true, ahead);
}

/** Children of one directory whose stats are taken ahead together (stat-ahead.ts). */
export const STAT_AHEAD_CHUNK = 256;

/**
 * The stats of a listed directory's children `from` to `from + STAT_AHEAD_CHUNK` taken ahead, for a walk
 * that reuses digests (every child is then statted first) when its lanes share a second reader and the
 * seam has statx (stat-ahead.ts); undefined otherwise (each child is statted when it is visited). In the
 * children's order.
 */
export function statChildrenAhead(
  state: AcquisitionState,
  dirFd: number,
  children: readonly { name: Buffer }[],
  from: number,
): StatAhead[] | undefined {
  const { fs, lanes } = state;
  const statAt = fs.entryStatAt;
  if (state.recorder?.reusesDigests !== true || lanes.statAhead === undefined || statAt === undefined) {
    return undefined;
  }
  const names: Buffer[] = [];
  for (let i = from; i < children.length && i < from + STAT_AHEAD_CHUNK; i++) {
    names.push((children[i] as { name: Buffer }).name);
  }
  return lanes.statAhead(dirFd, names, (at, name) => statAt.call(fs, at, name));
}

/**
 * Records a child by the lstat of its name (statx on the parent's handle), or by `ahead`, that same lstat
 * taken ahead (stat-ahead.ts). `mayRead`: false when the file was counted and its confined read already
 * refused it (nothing is read again).
 */
function recordByStat(
  state: AcquisitionState,
  walk: ManifestRecorder,
  dirFd: number,
  name: Buffer,
  uri: string,
  mayRead: boolean,
  ahead?: StatAhead,
): 'descend' | 'done' {
  let stat: EntryStat;
  try {
    const { fs } = state;
    if (ahead instanceof Error) throw ahead;
    stat = ahead ?? (fs.entryStatAt === undefined ? fs.lstatAt(dirFd, name) : fs.entryStatAt(dirFd, name));
  } catch (error) {
    rethrowCancelled(error);
    const code = errorCode(error);
    if (code !== 'ENOENT' && code !== 'ENOTDIR') state.gap('listing_failed', uri, `lookup failed (${code})`);
    return 'done';
  }
  const mode = stat.mode & 0o7777;
  if (stat.isDirectory()) {
    walk.add({ uri, type: 'directory', sizeBytes: 0, sha256: null, mode, linkTarget: null });
    return 'descend';
  }
  if (mayRead) countEntry(state, uri);
  if (stat.isSymbolicLink()) {
    walk.add({
      uri,
      type: 'symlink',
      sizeBytes: stat.size,
      sha256: null,
      mode,
      linkTarget: linkTarget(state, dirFd, name, uri),
    });
    return 'done';
  }
  if (!stat.isFile()) {
    walk.add({ uri, type: 'other', sizeBytes: stat.size, sha256: null, mode, linkTarget: null });
    return 'done';
  }
  // Provably unchanged since the baseline (baseline-digests.ts): its entry is the baseline's, nothing is read
  // (and no entry is made here: the caller's thread takes the baseline's).
  if (mayRead && walk.unchangedBaselineEntry(uri, stat) !== undefined) return 'done';
  const entry: ManifestEntry = {
    uri,
    type: 'file',
    sizeBytes: stat.size,
    sha256: null,
    mode,
    linkTarget: null,
  };
  if (!mayRead) {
    walk.add(entry);
    return 'done';
  }
  // Submitted to a reader (either thread): the entry is in the manifest already and gets the reader's size
  // and digest when the read is back; a later manifest may reuse it only if the bytes hashed are the ones
  // the stat describes (ManifestRecorder.settleRead).
  let result: CandidateResult = 'absent';
  const reads = state.manifestReads as ManifestReadLanes;
  if (reads.readFile(entry, stat, () => (result = readCandidate(state, dirFd, name, uri)))) return 'done';
  // Settled by the walk before any read intent: absent (no entry), or a gap (lstat size, no digest).
  if (result !== 'absent') walk.add(entry);
  return 'done';
}

function linkTarget(state: AcquisitionState, dirFd: number, name: Buffer, uri: string): string | null {
  let target: Buffer;
  try {
    target = state.fs.readlinkAt(dirFd, name);
  } catch (error) {
    rethrowCancelled(error);
    state.gap('read_failed', uri, `the symbolic link could not be read (${errorCode(error)})`);
    return null;
  }
  const text = decodeName(target);
  if (text === null) {
    state.gap('unrepresentable_name', uri, `the link target is not UTF-8: ${escapeName(target)}`);
  }
  return text;
}

function countEntry(state: AcquisitionState, uri: string): void {
  state.stats.candidates++;
  if (state.stats.candidates > state.limits.maxFiles) {
    state.gap(
      'file_limit_exceeded',
      uri,
      `more than ${state.limits.maxFiles} entries; the manifest stopped here`,
    );
    throw new EnumerationStopped();
  }
}
