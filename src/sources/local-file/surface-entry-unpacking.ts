import { isAscii as isAsciiBytes } from 'node:buffer';
import { CheckedSurfaceEntries } from '../../models/checked-observation.js';
import type { SurfaceEntry } from '../../models/observation.js';
import {
  isPackedSurfaceEntries,
  type PackedSurfaceEntries,
  SHA256_HEX_LENGTH,
  TIMESTAMP_LENGTH,
} from './packed-entries.js';

/**
 * The caller's side of the packed batches (packed-entries.ts explains the wire form and why). Kept apart
 * from the packing so that a pool thread, which only packs, never loads the entry rule and its schemas.
 */

/** An arena is made into its string once this many bytes wait (see packed-entries.ts for the size). */
const ARENA_BYTES = 1 << 19;

/**
 * No arena grows past this: the next batch starts a new one. Below 1,031,913 bytes, where Node would keep
 * a latin1 string outside the heap (its accounting brought more full collections).
 */
const ARENA_MAX_BYTES = 1_000_000;

/**
 * The caller's side of one acquisition: packed batches in, checked entry lists out. Batches wait until
 * their texts fill an arena (or {@link finish}).
 */
export class SurfaceEntryUnpacker {
  #waiting: { batch: PackedSurfaceEntries; at: number }[] = [];
  #chunks: Buffer[] = [];
  #bytes = 0;

  /** Checks what arrived; returns the lists completed by it (none while an arena is filling). */
  receive(batch: unknown): SurfaceEntry[][] {
    // Pool threads pack every glob batch (acquire-worker.ts); anything else here is a bug, never guessed at.
    if (!isPackedSurfaceEntries(batch)) throw new TypeError('a glob entry batch arrived unpacked: a bug');
    const count = batch.uris.length;
    if (
      typeof batch.sha256s !== 'string' ||
      !(batch.digested instanceof Uint8Array) ||
      batch.digested.length !== count ||
      batch.sha256s.length !== SHA256_HEX_LENGTH * countOnes(batch.digested) ||
      typeof batch.modifiedAts !== 'string' ||
      batch.modifiedAts.length !== TIMESTAMP_LENGTH * count ||
      batch.sizes.length !== count ||
      batch.truncated.length !== count ||
      batch.textEnds.length !== count ||
      batch.contents.length !== count ||
      (batch.vias !== undefined && batch.vias.length !== count) ||
      !(batch.text instanceof ArrayBuffer)
    ) {
      throw new TypeError('a packed entry batch has columns of different lengths: a bug');
    }
    checkTextEnds(batch);
    // A batch that would take the arena past its bound starts the next one (the lists of this one come out now).
    const done =
      this.#bytes > 0 && this.#bytes + batch.text.byteLength > ARENA_MAX_BYTES ? this.finish() : [];
    this.#waiting.push({ batch, at: this.#bytes });
    this.#chunks.push(Buffer.from(batch.text));
    this.#bytes += batch.text.byteLength;
    return this.#bytes >= ARENA_BYTES ? [...done, ...this.finish()] : done;
  }

  /** The lists of every batch still waiting (called when an arena is full, and at the end). */
  finish(): SurfaceEntry[][] {
    if (this.#waiting.length === 0) return [];
    const bytes = gather(this.#chunks, this.#bytes);
    // All ASCII (what the sender promised, checked here in one pass): every text sliced from this arena
    // is as many UTF-8 bytes long as it is long, so the entry check need not measure each one again.
    const ascii = isAsciiBytes(bytes);
    const text = bytes.toString('latin1');
    const lists: SurfaceEntry[][] = [];
    for (const { batch, at } of this.#waiting) lists.push(unpack(batch, text, at, ascii));
    this.#waiting = [];
    this.#chunks = [];
    this.#bytes = 0;
    return lists;
  }
}

/**
 * This thread's gathering buffer, kept between arenas: copying into memory already touched is cheap, while
 * each fresh megabyte costs its page faults (≈ 4 ms a MiB on this machine, measured).
 */
let gathering: Buffer | undefined;
const GATHERING_BYTES = 2 * ARENA_BYTES;

/** The chunks back to back, in the gathering buffer (valid until the next call). */
function gather(chunks: readonly Buffer[], bytes: number): Buffer {
  if (chunks.length === 1) return chunks[0] as Buffer;
  // An arena that outgrows the kept buffer (batches of large texts) is gathered in a buffer of its own.
  if (bytes > GATHERING_BYTES) return Buffer.concat(chunks, bytes);
  gathering ??= Buffer.allocUnsafeSlow(GATHERING_BYTES);
  let at = 0;
  for (const chunk of chunks) at += chunk.copy(gathering, at);
  return gathering.subarray(0, bytes);
}

/**
 * The text offsets of a batch make sense: each entry's end is -1 (its content travels apart) or no
 * smaller than the previous end, and the last end is the end of the buffer. A sender's offset error would
 * otherwise give an entry its neighbour's text — caught only when the lengths differ.
 */
function checkTextEnds(batch: PackedSurfaceEntries): void {
  let end = 0;
  for (let i = 0; i < batch.textEnds.length; i++) {
    const next = batch.textEnds[i] as number;
    if (next === -1) continue;
    if (next < end) throw new TypeError('a packed entry batch has text offsets out of order: a bug');
    end = next;
  }
  if (end !== batch.text.byteLength) {
    throw new TypeError(
      `a packed entry batch's texts end at ${end} of ${batch.text.byteLength} bytes: a bug`,
    );
  }
}

function countOnes(flags: Uint8Array): number {
  let count = 0;
  for (let i = 0; i < flags.length; i++) if (flags[i] === 1) count++;
  return count;
}

/**
 * Lowercase hexadecimal only, checked in one pass over all of a batch's digests: decoded as hex (which
 * stops at the first character that is not hex) and encoded again (which writes lowercase), the text must
 * come back unchanged. ≈ 0.08 µs a digest, against ≈ 0.3 µs for a pattern test of each (measured).
 */
function isLowercaseHex(text: string): boolean {
  return Buffer.from(text, 'hex').toString('hex') === text;
}

function unpack(batch: PackedSurfaceEntries, text: string, at: number, ascii: boolean): SurfaceEntry[] {
  const checked = new CheckedSurfaceEntries();
  const { uris, sha256s, digested, modifiedAts, sizes, truncated, textEnds, contents, vias } = batch;
  // Proven here for every digest of the batch, so the entry rule need not test each one again; a batch
  // that fails this leaves each digest to the entry rule, which refuses it naming the entry.
  const hex = isLowercaseHex(sha256s);
  let digestAt = 0;
  let start = at;
  for (let i = 0; i < uris.length; i++) {
    const end = textEnds[i] as number;
    let content: string | null;
    let utf8Bytes: number | undefined;
    if (end < 0) {
      content = contents[i] as string | null;
    } else {
      content = text.slice(start, at + end);
      start = at + end;
      if (ascii) utf8Bytes = content.length;
    }
    let sha256: string | null = null;
    if (digested[i] === 1) {
      sha256 = sha256s.slice(digestAt, digestAt + SHA256_HEX_LENGTH);
      digestAt += SHA256_HEX_LENGTH;
    }
    const modifiedAt = modifiedAts.slice(i * TIMESTAMP_LENGTH, (i + 1) * TIMESTAMP_LENGTH);
    const via = vias?.[i];
    checked.add(
      uris[i],
      sizes[i],
      sha256,
      modifiedAt,
      content,
      truncated[i] !== 0,
      utf8Bytes,
      hex,
      via === null ? undefined : via,
      truncated[i] === 2,
    );
  }
  return checked.list();
}

/** One batch's checked entries on their own (a pool job's consumer that keeps no unpacker: tests, bench). */
export function unpackSurfaceEntries(batch: unknown): SurfaceEntry[] {
  const unpacker = new SurfaceEntryUnpacker();
  return [...unpacker.receive(batch), ...unpacker.finish()].flat();
}
