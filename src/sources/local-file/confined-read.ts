import crypto, { createHash, type Hash } from 'node:crypto';
import type { SurfaceEntry } from '../../models/observation.js';
import { type AcquisitionState, errorCode, rethrowCancelled } from './acquisition-state.js';
import { placeHandle } from './confinement.js';

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
 *    O_NONBLOCK, and take size, time and bytes from that one handle, within the shared read budget.
 * 5. Close every handle on every path.
 */

export type CandidateResult = 'read' | 'absent' | 'gap';

const textDecoderOptions = { fatal: true, ignoreBOM: true } as const;

/**
 * sha256 of bytes that are a whole file, in one call (`crypto.hash`, Node ≥ 20.12) rather than a Hash
 * object per file; the digest is the same, only the allocation and the two crossings into C++ go.
 */
const hashWhole: (bytes: Buffer) => string =
  typeof crypto.hash === 'function'
    ? (bytes) => crypto.hash('sha256', bytes, 'hex')
    : (bytes) => createHash('sha256').update(bytes).digest('hex');

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
    try {
      return readOpenFile(state, readFd, pathStat, uri);
    } finally {
      fs.close(readFd);
    }
  } finally {
    fs.close(pathFd);
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

function readOpenFile(
  state: AcquisitionState,
  fd: number,
  pathStat: { dev: number; ino: number },
  uri: string,
): CandidateResult {
  const { fs, limits, chunk } = state;
  const stat = fs.fstat(fd);
  if (!stat.isFile() || stat.dev !== pathStat.dev || stat.ino !== pathStat.ino) {
    state.gap('confinement_unverified', uri, 'the reopened handle is not the checked file');
    return 'gap';
  }
  state.stats.filesRead++;
  // A file that fits in one chunk (nearly every file in a source tree) is hashed and decoded straight
  // from the scratch chunk: no Hash object, no retained copy, no concatenation. Larger files stream
  // through a Hash and keep their first maxContentBytes. Either way every byte read is hashed, each read
  // is capped by what is left of maxReadBytes, and the cancellation flag is checked before every chunk.
  let hash: Hash | undefined;
  let firstChunk: Buffer | undefined;
  const retained: Buffer[] = [];
  let retainedBytes = 0;
  let readBytes = 0;
  let exceeded = false;
  try {
    for (;;) {
      state.checkCancelled();
      const left = state.readBytesLeft;
      if (left <= 0) {
        exceeded = readBytes < stat.size || fs.read(fd, chunk, 1) > 0;
        break;
      }
      const requested = Math.min(chunk.length, left);
      const count = fs.read(fd, chunk, requested);
      if (count === 0) break;
      const bytes = chunk.subarray(0, count);
      state.stats.bytesRead += count;
      readBytes += count;
      // A regular file returns fewer bytes than asked only at its end: once that short read has reached
      // the size fstat reported, the end is known without one more read (half the reads for small files).
      const atEnd = count < requested && readBytes >= stat.size;
      if (atEnd && hash === undefined) {
        firstChunk = bytes;
        break;
      }
      hash ??= createHash('sha256');
      hash.update(bytes);
      if (retainedBytes < limits.maxContentBytes) {
        const keep = bytes.subarray(0, Math.min(count, limits.maxContentBytes - retainedBytes));
        retained.push(Buffer.from(keep));
        retainedBytes += keep.length;
      }
      if (atEnd) break;
    }
  } catch (error) {
    rethrowCancelled(error);
    state.gap('read_failed', uri, `read failed (${errorCode(error)})`);
    return 'gap';
  }
  if (exceeded)
    state.gap('read_limit_exceeded', uri, `read ${readBytes} of ${Math.max(stat.size, readBytes)} bytes`);
  let content: string | null;
  let partialText: boolean;
  let sha256: string | null;
  if (firstChunk !== undefined) {
    // The whole file is in the chunk; the chunk is reused by the next file, so both the digest and the
    // text are taken from it now.
    sha256 = hashWhole(firstChunk);
    partialText = firstChunk.length > limits.maxContentBytes;
    content = partialText
      ? decodeText(firstChunk.subarray(0, limits.maxContentBytes), true)
      : decodeWhole(firstChunk);
  } else {
    partialText = exceeded || readBytes > retainedBytes;
    content = decodeText(
      retained.length === 1 ? (retained[0] as Buffer) : Buffer.concat(retained, retainedBytes),
      partialText,
    );
    sha256 = exceeded ? null : (hash ?? createHash('sha256')).digest('hex');
  }
  const entry: SurfaceEntry = {
    uri,
    sizeBytes: exceeded ? Math.max(stat.size, readBytes) : readBytes,
    sha256,
    modifiedAt: modifiedAtOf(stat.mtimeMs),
    content,
    contentTruncated: content !== null && partialText,
  };
  state.addEntry(entry);
  return exceeded ? 'gap' : 'read';
}

const EARLIEST_MS = Date.parse('0000-01-01T00:00:00.000Z');
const LATEST_MS = Date.parse('9999-12-31T23:59:59.999Z');

/**
 * The modification time as a record timestamp, clamped to years 0000–9999. An agent can set any mtime
 * (tmpfs keeps year 10000 and beyond); unclamped, such a time has no ISO-8601 form the wire format
 * accepts, and one planted file would turn the whole acquisition into a rejected record instead of
 * evidence. Write attribution never rests on this time (SPEC §5.1), so clamping loses nothing judged.
 */
function modifiedAtOf(mtimeMs: number): string {
  const clamped = Number.isFinite(mtimeMs) ? Math.min(Math.max(mtimeMs, EARLIEST_MS), LATEST_MS) : 0;
  return new Date(clamped).toISOString();
}

/**
 * UTF-8 text of the retained bytes, or null when they are not UTF-8. A prefix cut inside a character
 * drops that character's bytes (at most 3); a byte-order mark is kept, so the text is the file's.
 */
function decodeText(bytes: Buffer, isPrefix: boolean): string | null {
  if (!isPrefix) return decodeWhole(bytes);
  try {
    // A prefix decodes in streaming mode so a character cut at the end is dropped, not an error; that
    // leaves state in the decoder, so a prefix gets a decoder of its own.
    return new TextDecoder('utf-8', textDecoderOptions).decode(bytes, { stream: true });
  } catch {
    return null;
  }
}

/**
 * One fatal decoder for every whole file: a non-streaming decode starts from a clean state and leaves
 * none behind. After a failure it is replaced anyway, so no state from one file can ever reach another.
 */
let wholeFileDecoder = new TextDecoder('utf-8', textDecoderOptions);

function decodeWhole(bytes: Buffer): string | null {
  try {
    return wholeFileDecoder.decode(bytes);
  } catch {
    wholeFileDecoder = new TextDecoder('utf-8', textDecoderOptions);
    return null;
  }
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
