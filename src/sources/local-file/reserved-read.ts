import { isAscii } from 'node:buffer';
import crypto, { createHash, type Hash } from 'node:crypto';
import { NON_TEXT_PREFIX_BYTES } from '../../models/evidence-limits.js';
import type { CoverageGap, SurfaceEntry } from '../../models/observation.js';
import { errorCode, rethrowCancelled } from '../confined-fs/fs-errors.js';
import type { SurfaceFs } from '../confined-fs/surface-fs.js';
import { modifiedAtOf } from './modified-at.js';
import { PACKED_TEXT_MAX } from './packed-entries.js';

/**
 * Reads one candidate file that the walk has already opened as O_PATH, placed inside the root and found
 * to be a regular file (confined-read.ts), within the bytes reserved for it. The reservation is made by the walk in enumeration order (`min(size, budget
 * left)`), never by whichever reader thread gets there first: so two readers sharing one walk spend
 * maxReadBytes on the same files, cut the same file, and report the same gaps, whatever the timing.
 *
 * The same function runs on the walking thread and on the second reader thread. It reaches nothing by
 * name: it reopens the checked O_PATH handle through /proc/self/fd (a swap after the check cannot
 * redirect it), refuses a reopened handle that is not the same regular file (dev/ino), and closes only
 * the read handle it opened; the O_PATH handle stays the walk's. It reports through a {@link ReadSink}.
 */

/** One checked candidate, as the walk submits it to a reader. */
export interface ReadTask {
  /** Position in enumeration order: orders this task's gaps among the walk's. */
  seq: number;
  /** The O_PATH handle, placed inside the root and fstat'ed as a regular file. */
  pathFd: number;
  uri: string;
  /** What fstat of the O_PATH handle reported: the reservation was made from this size. */
  size: number;
  dev: number;
  ino: number;
  /** Bytes of maxReadBytes set aside for this file, in enumeration order: `min(size, budget left)`. */
  reservation: number;
  /** The links followed to reach `uri` (resolve-beneath.ts), for the entry; absent when none. */
  via?: string;
}

export interface ReadSink {
  /** Scratch buffer, reused across files. */
  readonly chunk: Buffer;
  readonly maxContentBytes: number;
  /**
   * A manifest's reads (SPEC §12): the entry keeps size and digest only, so no text is kept or decoded
   * (`content` null). The reopen, the dev/ino check, the reservation and every byte hashed are the same.
   */
  readonly digestOnly?: boolean;
  /** The seam's reopen, fstat, read and close, behind the cancellation guard. */
  readonly fs: Pick<SurfaceFs, 'reopenForRead' | 'fstat' | 'read' | 'close'>;
  /** A reopened handle passed its check: the file counts as read (stats.filesRead). */
  fileRead(): void;
  /** Throws OperationCancelled once the caller's flag is up; called before every chunk. */
  checkCancelled(): void;
  /** A gap of the task with this `seq`. */
  gap(seq: number, gap: CoverageGap): void;
  entry(entry: SurfaceEntry): void;
  /**
   * Where a sink packs entries for posting (packed-entries.ts): a whole file read in one chunk, not cut,
   * whose bytes are all ASCII and at most PACKED_TEXT_MAX comes here instead of {@link entry}, its text as
   * those bytes (the same text: ASCII decodes to itself). The sink copies them before it returns: the
   * chunk is reused by the next file.
   */
  asciiEntry?: (
    uri: string,
    sizeBytes: number,
    sha256: string,
    modifiedAt: string,
    text: Buffer,
    via: string | undefined,
  ) => void;
  /** Bytes really read (the budget was spent by the reservation; this is the statistic). */
  bytesRead(count: number): void;
}

export type ReadOutcome = 'read' | 'gap';

const CHUNK_BYTES = 1 << 20;
let scratch: Buffer | undefined;

/**
 * This thread's read buffer (1 MiB), allocated once: allocating it per acquisition cost more than the
 * whole rest of an exact acquisition (the allocation and the garbage collection it caused). Safe to share
 * because everything on a thread that reads into it runs synchronously to the end of the file: no bytes
 * of it are kept (digests and text are taken at once; retained prefixes are copied).
 */
export function scratchChunk(): Buffer {
  scratch ??= Buffer.allocUnsafe(CHUNK_BYTES);
  return scratch;
}

const textDecoderOptions = { fatal: true, ignoreBOM: true } as const;

/**
 * sha256 of bytes that are a whole file, in one call (`crypto.hash`, Node ≥ 20.12) rather than a Hash
 * object per file; the digest is the same, only the allocation and the two crossings into C++ go.
 */
const hashWhole: (bytes: Buffer) => string =
  typeof crypto.hash === 'function'
    ? (bytes) => crypto.hash('sha256', bytes, 'hex')
    : (bytes) => createHash('sha256').update(bytes).digest('hex');

/**
 * Reads `task`. The read handle it opens is closed before it returns — by `sink.fs.close`, or, when
 * `closeRead` is given, by handing it to `closeRead`, whose caller must close it (read-lanes.ts closes it
 * together with the O_PATH handle, in one system call when it can).
 */
export function readTask(sink: ReadSink, task: ReadTask, closeRead?: (fd: number) => void): ReadOutcome {
  const { uri } = task;
  let fd: number;
  try {
    fd = sink.fs.reopenForRead(task.pathFd);
  } catch (error) {
    rethrowCancelled(error);
    sink.gap(task.seq, {
      reason: 'read_failed',
      uri,
      detail: `open for reading failed (${errorCode(error)})`,
    });
    return 'gap';
  }
  try {
    let stat: { isFile(): boolean; dev: number; ino: number; mtimeMs: number };
    try {
      stat = sink.fs.fstat(fd);
    } catch (error) {
      rethrowCancelled(error);
      sink.gap(task.seq, { reason: 'read_failed', uri, detail: `fstat failed (${errorCode(error)})` });
      return 'gap';
    }
    if (!stat.isFile() || stat.dev !== task.dev || stat.ino !== task.ino) {
      sink.gap(task.seq, {
        reason: 'confinement_unverified',
        uri,
        detail: 'the reopened handle is not the checked file',
      });
      return 'gap';
    }
    sink.fileRead();
    return readReserved(sink, task, fd, stat.mtimeMs);
  } finally {
    if (closeRead === undefined) sink.fs.close(fd);
    else closeRead(fd);
  }
}

function readReserved(sink: ReadSink, task: ReadTask, fd: number, mtimeMs: number): ReadOutcome {
  const { chunk } = sink;
  const maxContentBytes = sink.digestOnly === true ? 0 : sink.maxContentBytes;
  const { uri, size, reservation } = task;
  // The whole file was reserved: one byte past the reservation may be asked for, so a short read proves
  // the end in one call (half the reads for small files). A file that returns that byte grew after its
  // fstat; it is cut at its reservation (a budget never stretches by timing) and reported.
  const whole = reservation >= size;
  // A file that fits in one chunk (nearly every file in a source tree) is hashed and decoded straight
  // from the scratch chunk: no Hash object, no retained copy, no concatenation. Larger files stream
  // through a Hash and keep their first maxContentBytes. Every byte read is hashed, no read goes past
  // the reservation (but for the one-byte end probe), and the cancellation flag is checked before every
  // chunk.
  let hash: Hash | undefined;
  let firstChunk: Buffer | undefined;
  const retained: Buffer[] = [];
  let retainedBytes = 0;
  let readBytes = 0;
  let exceeded = false;
  let grew = false;
  try {
    for (;;) {
      sink.checkCancelled();
      const left = reservation - readBytes;
      if (left <= 0 && !whole) {
        exceeded = readBytes < size || sink.fs.read(fd, chunk, 1) > 0;
        break;
      }
      const requested = Math.min(chunk.length, whole ? left + 1 : left);
      let count = sink.fs.read(fd, chunk, requested);
      if (count === 0) break;
      if (count > left) {
        // Only possible when the whole file was reserved: it holds more than fstat said.
        grew = true;
        count = left;
      }
      const bytes = chunk.subarray(0, count);
      readBytes += count;
      // A regular file returns fewer bytes than asked only at its end: once that short read has reached
      // the size fstat reported, the end is known without one more read.
      const atEnd = grew || (count < requested && readBytes >= size);
      if (atEnd && hash === undefined) {
        firstChunk = bytes;
        break;
      }
      hash ??= createHash('sha256');
      hash.update(bytes);
      if (retainedBytes < maxContentBytes) {
        const keep = bytes.subarray(0, Math.min(count, maxContentBytes - retainedBytes));
        retained.push(Buffer.from(keep));
        retainedBytes += keep.length;
      }
      if (atEnd) break;
    }
  } catch (error) {
    rethrowCancelled(error);
    sink.bytesRead(readBytes);
    sink.gap(task.seq, { reason: 'read_failed', uri, detail: `read failed (${errorCode(error)})` });
    return 'gap';
  }
  sink.bytesRead(readBytes);
  if (exceeded) {
    sink.gap(task.seq, {
      reason: 'read_limit_exceeded',
      uri,
      detail: `read ${readBytes} of ${Math.max(size, readBytes)} bytes`,
    });
  } else if (grew) {
    sink.gap(task.seq, {
      reason: 'read_failed',
      uri,
      detail: `the file grew while it was read (fstat reported ${size} bytes); only those were read`,
    });
  }
  const cut = exceeded || grew;
  let text: RetainedText;
  let sha256: string | null;
  if (sink.digestOnly === true) {
    // Nothing was retained (maxContentBytes 0 above): only the digest is taken, from the chunk or the Hash.
    text = { content: null, truncated: false, notText: false };
    sha256 = cut
      ? null
      : firstChunk !== undefined
        ? hashWhole(firstChunk)
        : (hash ?? createHash('sha256')).digest('hex');
  } else if (firstChunk !== undefined && !cut) {
    // The whole file is in the chunk; the chunk is reused by the next file, so both the digest and the
    // text are taken from it now.
    sha256 = hashWhole(firstChunk);
    if (
      sink.asciiEntry !== undefined &&
      firstChunk.length <= maxContentBytes &&
      firstChunk.length <= PACKED_TEXT_MAX &&
      isAscii(firstChunk) &&
      firstChunk.indexOf(0) === -1
    ) {
      sink.asciiEntry(uri, readBytes, sha256, modifiedAtOf(mtimeMs), firstChunk, task.via);
      return 'read';
    }
    const partial = firstChunk.length > maxContentBytes;
    text = retainedText(partial ? firstChunk.subarray(0, maxContentBytes) : firstChunk, partial);
  } else if (firstChunk !== undefined) {
    sha256 = null;
    text = retainedText(firstChunk.subarray(0, Math.min(firstChunk.length, maxContentBytes)), true);
  } else {
    text = retainedText(
      retained.length === 1 ? (retained[0] as Buffer) : Buffer.concat(retained, retainedBytes),
      cut || readBytes > retainedBytes,
    );
    sha256 = cut ? null : (hash ?? createHash('sha256')).digest('hex');
  }
  const entry: SurfaceEntry = {
    uri,
    sizeBytes: cut ? Math.max(size, readBytes) : readBytes,
    sha256,
    modifiedAt: modifiedAtOf(mtimeMs),
    content: text.content,
    contentTruncated: text.truncated,
  };
  if (task.via !== undefined) entry.via = task.via;
  if (text.notText) entry.notText = true;
  sink.entry(entry);
  return cut ? 'gap' : 'read';
}

interface RetainedText {
  content: string | null;
  truncated: boolean;
  notText: boolean;
}

/**
 * What an entry keeps of the bytes retained of its file (SPEC §13). Text (UTF-8 without a NUL byte) is
 * kept as it is, a prefix when the file was longer. Anything else is not text: a 16 MB binary kept as a
 * string cost its size in the record (five times it in JSON escapes, when it was valid UTF-8) and no
 * text criterion can be decided on it anyway. It keeps only the longest UTF-8 start of its first
 * {@link NON_TEXT_PREFIX_BYTES} bytes, marked truncated: a `contains` found there still proves (as `grep -a`
 * would find it), nothing else is decided from it, and the length and digest stand for the rest.
 */
function retainedText(bytes: Buffer, isPrefix: boolean): RetainedText {
  const text = bytes.indexOf(0) === -1 ? decodeText(bytes, isPrefix) : null;
  if (text !== null) return { content: text, truncated: isPrefix, notText: false };
  const head = bytes.subarray(0, utf8PrefixLength(bytes.subarray(0, NON_TEXT_PREFIX_BYTES)));
  return { content: decodeWhole(head) ?? '', truncated: true, notText: true };
}

/**
 * The length of the longest start of `bytes` that is whole UTF-8 characters (RFC 3629: no overlong forms,
 * no surrogates, nothing past U+10FFFF); a character cut at the end is left out.
 */
function utf8PrefixLength(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i] as number;
    if (lead < 0x80) {
      i++;
      continue;
    }
    let length: number;
    let low = 0x80;
    let high = 0xbf;
    if (lead >= 0xc2 && lead <= 0xdf) length = 2;
    else if (lead >= 0xe0 && lead <= 0xef) {
      length = 3;
      if (lead === 0xe0) low = 0xa0;
      if (lead === 0xed) high = 0x9f;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      length = 4;
      if (lead === 0xf0) low = 0x90;
      if (lead === 0xf4) high = 0x8f;
    } else return i;
    if (i + length > bytes.length) return i;
    const second = bytes[i + 1] as number;
    if (second < low || second > high) return i;
    for (let k = 2; k < length; k++) {
      const next = bytes[i + k] as number;
      if (next < 0x80 || next > 0xbf) return i;
    }
    i += length;
  }
  return i;
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
 * One fatal decoder for every whole file (per thread): a non-streaming decode starts from a clean state
 * and leaves none behind. After a failure it is replaced anyway, so no state from one file can ever
 * reach another.
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
