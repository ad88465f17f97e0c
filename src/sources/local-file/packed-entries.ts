import type { ManifestEntry } from '../../models/manifest.js';
import type { SurfaceEntry } from '../../models/observation.js';
import { MANIFEST_ENTRY_TYPES, type ManifestEntryType } from '../../models/vocabulary.js';

/**
 * How a glob acquisition's entries travel from a pool thread to the caller's thread. With
 * every entry posted as an object, the caller's heap received 100,000 small strings of file text (≈ 105 MB
 * for a 100,000-file tree), and the garbage collector copied each of them twice (young generation, then old)
 * and marked them again at every cycle while the heap grew: ≈ 1 s of the process's CPU per acquisition, on
 * threads that compete with the readers for two cores.
 *
 * So a batch is posted packed: the uris as an array, the digests and the times each as one string, the
 * sizes and flags as typed arrays, and the text of every file that is ASCII (nearly every file of a source
 * tree) and at most 8 KiB as raw bytes back to back in one buffer that is transferred, not copied (a
 * reading thread puts such a file's bytes there straight from its read: {@link SurfaceEntryPacker}). The
 * caller (surface-entry-unpacking.ts, kept apart so that a pool thread never loads the entry rule and its schemas)
 * gathers those bytes until about 512 KiB wait, turns them into one string (large enough that V8 puts it
 * in its large-object space, where the collector never copies it) and gives each entry a slice of it.
 * Other text travels as a string of its own; a null content stays null.
 *
 * What the caller gets is what it got before: each entry a fresh frozen plain object, checked on arrival by
 * the entry rule (checked-observation.ts), whose `content` is a string equal to the file's text. A slice
 * keeps its whole arena (under 1 MB) alive: an entry's text is evidence held with its observation; code
 * that keeps a piece of it for longer than the observation should copy it.
 */

/** A batch of surface entries as a pool thread posts it (see the module's comment). */
export interface PackedSurfaceEntries {
  readonly packed: 'surface-entries';
  readonly uris: string[];
  /**
   * The digests of the entries whose `digested` is 1, back to back ({@link SHA256_HEX_LENGTH} characters
   * each): one string to clone and to check (surface-entry-unpacking.ts checks it is lowercase hex in one pass, where
   * a pattern test per digest was a tenth of the caller's CPU in a 100,000-file acquisition).
   */
  readonly sha256s: string;
  /** 1 where the entry has a digest (in `sha256s`), 0 where its digest is null. */
  readonly digested: Uint8Array;
  /** The timestamps back to back, {@link TIMESTAMP_LENGTH} characters each (modified-at.ts builds them). */
  readonly modifiedAts: string;
  readonly sizes: Float64Array;
  /** 1 where the entry's content is a truncated prefix; 2 where it is the prefix of a file that is not text. */
  readonly truncated: Uint8Array;
  /**
   * Per entry, where its text ends in `text` (it starts where the previous text in `text` ended), or -1:
   * its content is `contents[i]` (a string, or null).
   */
  readonly textEnds: Int32Array;
  readonly contents: (string | null)[];
  /** The ASCII texts of the batch, back to back (transferred with the message). */
  readonly text: ArrayBuffer;
  /** Per entry, the links followed to reach it (`via`), when any entry of the batch has one. */
  readonly vias?: (string | null)[];
}

/** Characters of a sha256 digest in hex. */
export const SHA256_HEX_LENGTH = 64;
/** Characters of a record timestamp, `YYYY-MM-DDTHH:MM:SS.mmmZ` (years 0000–9999: modified-at.ts). */
export const TIMESTAMP_LENGTH = 24;

/**
 * Texts longer than this travel as strings of their own: a batch's ASCII texts then stay under 800 KiB
 * (100 × 8 KiB), so an arena of the receiver (surface-entry-unpacking.ts) stays below the size at which Node would
 * keep its string outside the heap, and a kept slice pins at most about 1 MB.
 */
export const PACKED_TEXT_MAX = 8 * 1024;

/** ASCII text: its UTF-8 length is its length (any other code unit takes two bytes or more). */
const isAscii = (text: string): boolean => Buffer.byteLength(text, 'utf8') === text.length;

/**
 * Entries per batch a reading thread posts (about 100 KB of small files' text per message). Entries wait in
 * the pool thread's young generation until their batch leaves, and every scavenge copies the waiting ones:
 * 1,000 a batch made garbage collection the largest single cost of a reader thread; 100 took
 * ≈ 11 % off the CPU of a 100,000-file acquisition, 250 ≈ 8 %.
 */
export const ENTRY_BATCH = 100;

/** The first text buffer a packer takes when its thread has none to spare. */
const FIRST_TEXT_BYTES = 16 * 1024;

/**
 * A text buffer given back by a finished packer on this thread (each thread has its own module state):
 * the next packer takes it. Two packers alive at once on a thread each hold their own.
 */
let spareText: Buffer | undefined;

/**
 * A pool thread's batch in the making. An entry arrives either as an entry ({@link add}) or, for a whole
 * file read at once whose bytes are all ASCII (nearly every file of a source tree), as those bytes
 * ({@link addAscii}): they are copied straight into the batch, so no string of the text is ever made on
 * the pool thread (decoding, measuring and writing it back cost ≈ 1.5 % of a 100,000-file acquisition's
 * CPU). The caller's thread checks the batch's bytes are ASCII all the same.
 *
 * Given a `post`, the packer posts each batch of {@link ENTRY_BATCH} as it fills and the rest at
 * {@link flush}; a batch is cleared only once posted, so a post that fails (the entry being added gets a
 * gap from its reader) leaves the batch's other entries to go with the next one, never a hole. Without
 * one, {@link take} gives the batch.
 */
export class SurfaceEntryPacker {
  constructor(private readonly post?: (batch: PackedSurfaceEntries) => void) {}

  #uris: string[] = [];
  #sha256s: string[] = [];
  #digested: number[] = [];
  #modifiedAts: string[] = [];
  #sizes: number[] = [];
  #truncated: number[] = [];
  #textEnds: number[] = [];
  #contents: (string | null)[] = [];
  /** Each entry's `via`, once an entry of the batch has one (null for the others). */
  #vias: (string | null)[] | undefined;
  /**
   * The batch's ASCII texts so far, back to back; reused from batch to batch, taken at the first text
   * (this thread's spare, or a new one) and given back by {@link release}.
   */
  #text: Buffer | undefined;
  #bytes = 0;

  /** Entries in the batch so far. */
  get count(): number {
    return this.#uris.length;
  }

  add(entry: SurfaceEntry): void {
    const content = entry.content;
    this.#fields(
      entry.uri,
      entry.sizeBytes,
      entry.sha256,
      entry.modifiedAt,
      entry.contentTruncated,
      entry.via,
      entry.notText === true,
    );
    if (content !== null && content.length <= PACKED_TEXT_MAX && isAscii(content)) {
      this.#bytes += this.#room(content.length).write(content, this.#bytes, 'latin1');
      this.#textEnds.push(this.#bytes);
      this.#contents.push(null);
    } else {
      this.#textEnds.push(-1);
      this.#contents.push(content);
    }
    this.#postIfFull();
  }

  /**
   * The entry of a whole file whose `text` bytes are all ASCII and at most {@link PACKED_TEXT_MAX}: its
   * content is those bytes (ASCII decodes to itself), copied here before this returns.
   */
  addAscii(
    uri: string,
    sizeBytes: number,
    sha256: string,
    modifiedAt: string,
    text: Uint8Array,
    via?: string,
  ): void {
    if (text.length > PACKED_TEXT_MAX) throw new Error(`an ASCII text of ${text.length} bytes: a bug`);
    this.#fields(uri, sizeBytes, sha256, modifiedAt, false, via);
    this.#room(text.length).set(text, this.#bytes);
    this.#bytes += text.length;
    this.#textEnds.push(this.#bytes);
    this.#contents.push(null);
    this.#postIfFull();
  }

  /** Posts the last, partial batch (if any) and gives the text buffer back to this thread. */
  flush(): void {
    if (this.count > 0) this.#post();
    this.release();
  }

  /** The batch, packed for posting (`[packed.text]` is the transfer list); the packer starts afresh. */
  take(): PackedSurfaceEntries {
    const packed = this.#pack();
    this.#clear();
    return packed;
  }

  #postIfFull(): void {
    if (this.post !== undefined && this.count >= ENTRY_BATCH) this.#post();
  }

  #post(): void {
    this.post?.(this.#pack());
    this.#clear();
  }

  #pack(): PackedSurfaceEntries {
    // A buffer of its own (never Node's shared pool), so it can be transferred.
    const text = Buffer.allocUnsafeSlow(this.#bytes);
    this.#text?.copy(text, 0, 0, this.#bytes);
    return {
      packed: 'surface-entries',
      uris: this.#uris,
      sha256s: this.#sha256s.join(''),
      digested: Uint8Array.from(this.#digested),
      modifiedAts: this.#modifiedAts.join(''),
      sizes: Float64Array.from(this.#sizes),
      truncated: Uint8Array.from(this.#truncated),
      textEnds: Int32Array.from(this.#textEnds),
      contents: this.#contents,
      text: text.buffer as ArrayBuffer,
      ...(this.#vias === undefined ? {} : { vias: this.#vias }),
    };
  }

  /** Starts a new batch (the text buffer is kept for it). */
  #clear(): void {
    this.#uris = [];
    this.#sha256s = [];
    this.#digested = [];
    this.#modifiedAts = [];
    this.#sizes = [];
    this.#truncated = [];
    this.#textEnds = [];
    this.#contents = [];
    this.#vias = undefined;
    this.#bytes = 0;
  }

  #fields(
    uri: string,
    sizeBytes: number,
    sha256: string | null,
    modifiedAt: string,
    contentTruncated: boolean,
    via: string | undefined,
    notText = false,
  ): void {
    if (via !== undefined) {
      this.#vias ??= new Array(this.#uris.length).fill(null);
      this.#vias.push(via);
    } else this.#vias?.push(null);
    if (sha256 !== null && sha256.length !== SHA256_HEX_LENGTH) {
      throw new Error(`a digest of ${sha256.length} characters: a bug`);
    }
    if (modifiedAt.length !== TIMESTAMP_LENGTH) {
      throw new Error(`a timestamp of ${modifiedAt.length} characters: a bug`);
    }
    this.#uris.push(uri);
    if (sha256 !== null) this.#sha256s.push(sha256);
    this.#digested.push(sha256 === null ? 0 : 1);
    this.#modifiedAts.push(modifiedAt);
    this.#sizes.push(sizeBytes);
    // 2: a prefix of a file that is not text (truncated too).
    this.#truncated.push(notText ? 2 : contentTruncated ? 1 : 0);
  }

  /**
   * This thread's text buffer goes back to the thread, for the next packer (call once the last batch has
   * been taken): a campaign's thousands of small acquisitions would otherwise each leave one behind for
   * the collector (a 1,600-attempt campaign's peak memory rose by ≈ 20 MiB without this).
   */
  release(): void {
    const text = this.#text;
    this.#text = undefined;
    this.#clear();
    if (text !== undefined && (spareText === undefined || text.length > spareText.length)) spareText = text;
  }

  /** The text buffer, with room for `bytes` more (it doubles; a batch's texts stay under 100 × 8 KiB). */
  #room(bytes: number): Buffer {
    let text = this.#text;
    if (text === undefined) {
      text = spareText ?? Buffer.allocUnsafeSlow(FIRST_TEXT_BYTES);
      spareText = undefined;
      this.#text = text;
    }
    if (this.#bytes + bytes <= text.length) return text;
    const grown = Buffer.allocUnsafeSlow(Math.max(2 * text.length, this.#bytes + bytes));
    text.copy(grown, 0, 0, this.#bytes);
    this.#text = grown;
    return grown;
  }
}

/** Packs entries for posting (`[packed.text]` is the transfer list); gives the text buffer back. */
export function packSurfaceEntries(entries: readonly SurfaceEntry[]): PackedSurfaceEntries {
  const packer = new SurfaceEntryPacker();
  for (const entry of entries) packer.add(entry);
  const packed = packer.take();
  packer.release();
  return packed;
}

export function isPackedSurfaceEntries(value: unknown): value is PackedSurfaceEntries {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { packed?: unknown }).packed === 'surface-entries'
  );
}

/**
 * A batch of manifest entries (SPEC §12) as a pool thread posts it: columns, not objects. Cloning 1,000
 * entry objects wrote every key of every object and made the caller's thread build them again, and each
 * was then read back key by key by the entry rule: ≈ 8 ms of the walking thread and ≈ 1.6 µs an entry on
 * the caller's per 10,000-file manifest. The caller (manifest-entry-unpacking.ts) builds each
 * entry itself from the columns and checks it by the entry rule, as before.
 */
export interface PackedManifestEntries {
  readonly packed: 'manifest-entries';
  readonly uris: string[];
  /** Each entry's type, as its index in MANIFEST_ENTRY_TYPES. */
  readonly types: Uint8Array;
  readonly sizes: Float64Array;
  readonly modes: Float64Array;
  readonly sha256s: (string | null)[];
  readonly linkTargets: (string | null)[];
}

/** Packs manifest entries for posting; {@link manifestTransfer} is the transfer list. */
export function packManifestEntries(entries: readonly ManifestEntry[]): PackedManifestEntries {
  const count = entries.length;
  const uris: string[] = new Array(count);
  const sha256s: (string | null)[] = new Array(count);
  const linkTargets: (string | null)[] = new Array(count);
  const types = new Uint8Array(count);
  const sizes = new Float64Array(count);
  const modes = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    const entry = entries[i] as ManifestEntry;
    uris[i] = entry.uri;
    types[i] = typeCode(entry.type);
    sizes[i] = entry.sizeBytes;
    modes[i] = entry.mode;
    sha256s[i] = entry.sha256;
    linkTargets[i] = entry.linkTarget;
  }
  return { packed: 'manifest-entries', uris, types, sizes, modes, sha256s, linkTargets };
}

/** The buffers a packed manifest batch transfers rather than copies. */
export function manifestTransfer(batch: PackedManifestEntries): ArrayBuffer[] {
  return [batch.types.buffer, batch.sizes.buffer, batch.modes.buffer] as ArrayBuffer[];
}

function typeCode(type: ManifestEntryType): number {
  const code = MANIFEST_ENTRY_TYPES.indexOf(type);
  if (code < 0) throw new Error(`a manifest entry of type ${String(type)}: a bug`);
  return code;
}

export function isPackedManifestEntries(value: unknown): value is PackedManifestEntries {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { packed?: unknown }).packed === 'manifest-entries'
  );
}
