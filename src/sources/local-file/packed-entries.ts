import { isAscii as isAsciiBytes } from 'node:buffer';
import { CheckedSurfaceEntries, checkSurfaceEntries } from '../../models/checked-observation.js';
import type { SurfaceEntry } from '../../models/observation.js';

/**
 * How a glob acquisition's entries travel from a pool thread to the caller's thread, and how the caller
 * keeps their text. Issue 14, row 1a: with every entry posted as an object, the caller's heap received
 * 100,000 small strings of file text (≈ 105 MB for the bench tree), and the garbage collector copied each
 * of them twice (young generation, then old) and marked them again at every cycle while the heap grew: ≈ 1 s
 * of the process's CPU per acquisition, on threads that compete with the readers for two cores.
 *
 * So a batch is posted packed: the uris, digests and times as arrays, the sizes and flags as typed arrays,
 * and the text of every file that is ASCII (nearly every file of a source tree) as raw bytes back to back
 * in one buffer that is transferred, not copied. The caller gathers those bytes until about 512 KiB is
 * waiting, turns them into one string (large enough that V8 puts it in its large-object space, where the
 * collector never copies it) and gives each entry a slice of it (a small object pointing into that
 * string). Other text (not ASCII, or large) travels as a string of its own, as before; a null content
 * stays null. Measured (docs/perf/s19-walk.md): row 1a 1.71–1.86× → 1.62–1.69×, alternated. An arena
 * of 1 MiB or more became an external string (Node keeps latin1 strings from 1,031,913 bytes outside the
 * heap), whose accounting triggered more full collections: slower in the bench process, so the arena
 * stays below that.
 *
 * What the caller gets is what it got before: each entry a fresh frozen plain object, checked on arrival by
 * the entry rule (checked-observation.ts), whose `content` is a string equal to the file's text. A slice
 * keeps its whole arena (≤ 512 KiB plus one batch) alive: an entry's text is evidence held with its
 * observation; code that keeps a piece of it for longer than the observation should copy it.
 */

/** A batch of surface entries as a pool thread posts it (see the module's comment). */
export interface PackedSurfaceEntries {
  readonly packed: 'surface-entries';
  readonly uris: string[];
  readonly sha256s: (string | null)[];
  readonly modifiedAts: string[];
  readonly sizes: Float64Array;
  /** 1 where the entry's content is a truncated prefix. */
  readonly truncated: Uint8Array;
  /**
   * Per entry, where its text ends in `text` (it starts where the previous text in `text` ended), or -1:
   * its content is `contents[i]` (a string, or null).
   */
  readonly textEnds: Int32Array;
  readonly contents: (string | null)[];
  /** The ASCII texts of the batch, back to back (transferred with the message). */
  readonly text: ArrayBuffer;
}

/** Texts longer than this travel as strings of their own (one file never pins more than its own arena). */
const ARENA_TEXT_MAX = 64 * 1024;

/** Bytes gathered before they become one string (see the module's comment for the size). */
const ARENA_BYTES = 1 << 19;

/** ASCII text: its UTF-8 length is its length (any other code unit takes two bytes or more). */
const isAscii = (text: string): boolean => Buffer.byteLength(text, 'utf8') === text.length;

/** Packs entries for posting; `[packed.text]` is the transfer list. */
export function packSurfaceEntries(entries: readonly SurfaceEntry[]): PackedSurfaceEntries {
  const count = entries.length;
  const uris: string[] = new Array(count);
  const sha256s: (string | null)[] = new Array(count);
  const modifiedAts: string[] = new Array(count);
  const contents: (string | null)[] = new Array(count);
  const sizes = new Float64Array(count);
  const truncated = new Uint8Array(count);
  const textEnds = new Int32Array(count);
  let bytes = 0;
  for (let i = 0; i < count; i++) {
    const entry = entries[i] as SurfaceEntry;
    uris[i] = entry.uri;
    sha256s[i] = entry.sha256;
    modifiedAts[i] = entry.modifiedAt;
    sizes[i] = entry.sizeBytes;
    truncated[i] = entry.contentTruncated ? 1 : 0;
    const content = entry.content;
    if (content !== null && content.length <= ARENA_TEXT_MAX && isAscii(content)) {
      bytes += content.length;
      textEnds[i] = bytes;
      contents[i] = null;
    } else {
      textEnds[i] = -1;
      contents[i] = content;
    }
  }
  // A buffer of its own (never Node's shared pool), so it can be transferred.
  const text = Buffer.allocUnsafeSlow(bytes);
  let at = 0;
  for (let i = 0; i < count; i++) {
    if (textEnds[i] === -1) continue;
    const content = (entries[i] as SurfaceEntry).content as string;
    at += text.write(content, at, 'latin1');
  }
  if (at !== bytes) throw new Error(`packSurfaceEntries wrote ${at} of ${bytes} text bytes: a bug`);
  return {
    packed: 'surface-entries',
    uris,
    sha256s,
    modifiedAts,
    sizes,
    truncated,
    textEnds,
    contents,
    text: text.buffer as ArrayBuffer,
  };
}

export function isPackedSurfaceEntries(value: unknown): value is PackedSurfaceEntries {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { packed?: unknown }).packed === 'surface-entries'
  );
}

/**
 * The caller's side of one acquisition: batches in, checked entry lists out. Packed batches wait until
 * their texts fill an arena (or {@link finish}); a batch of entry objects is checked at once.
 */
export class SurfaceEntryReceipt {
  #waiting: { batch: PackedSurfaceEntries; at: number }[] = [];
  #chunks: Buffer[] = [];
  #bytes = 0;

  /** Checks what arrived; returns the lists completed by it (none while an arena is filling). */
  receive(batch: unknown): SurfaceEntry[][] {
    if (!isPackedSurfaceEntries(batch)) return [checkSurfaceEntries(batch as readonly unknown[])];
    const count = batch.uris.length;
    if (
      batch.sha256s.length !== count ||
      batch.modifiedAts.length !== count ||
      batch.sizes.length !== count ||
      batch.truncated.length !== count ||
      batch.textEnds.length !== count ||
      batch.contents.length !== count ||
      !(batch.text instanceof ArrayBuffer)
    ) {
      throw new TypeError('a packed entry batch has columns of different lengths: a bug');
    }
    this.#waiting.push({ batch, at: this.#bytes });
    this.#chunks.push(Buffer.from(batch.text));
    this.#bytes += batch.text.byteLength;
    return this.#bytes >= ARENA_BYTES ? this.finish() : [];
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

function unpack(batch: PackedSurfaceEntries, text: string, at: number, ascii: boolean): SurfaceEntry[] {
  const checked = new CheckedSurfaceEntries();
  const { uris, sha256s, modifiedAts, sizes, truncated, textEnds, contents } = batch;
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
    checked.add(uris[i], sizes[i], sha256s[i], modifiedAts[i], content, truncated[i] === 1, utf8Bytes);
  }
  return checked.list();
}

/** One batch's checked entries on their own (a pool job's consumer that keeps no receipt: tests, bench). */
export function unpackSurfaceEntries(batch: unknown): SurfaceEntry[] {
  const receipt = new SurfaceEntryReceipt();
  return [...receipt.receive(batch), ...receipt.finish()].flat();
}
