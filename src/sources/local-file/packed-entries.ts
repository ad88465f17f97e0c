import type { ManifestEntry } from '../../models/manifest.js';
import type { SurfaceEntry } from '../../models/observation.js';
import { MANIFEST_ENTRY_TYPES, type ManifestEntryType } from '../../models/vocabulary.js';

/**
 * How a glob acquisition's entries travel from a pool thread to the caller's thread. Issue 14, row 1a: with
 * every entry posted as an object, the caller's heap received 100,000 small strings of file text (≈ 105 MB
 * for the bench tree), and the garbage collector copied each of them twice (young generation, then old)
 * and marked them again at every cycle while the heap grew: ≈ 1 s of the process's CPU per acquisition, on
 * threads that compete with the readers for two cores.
 *
 * So a batch is posted packed: the uris, digests and times as arrays, the sizes and flags as typed arrays,
 * and the text of every file that is ASCII (nearly every file of a source tree) and at most 8 KiB as raw
 * bytes back to back in one buffer that is transferred, not copied. The caller (entry-receipt.ts, kept
 * apart so that a pool thread never loads the entry rule and its schemas) gathers those bytes until about
 * 512 KiB wait, turns them into one string (large enough that V8 puts it in its large-object space, where
 * the collector never copies it) and gives each entry a slice of it. Other text travels as a string of its
 * own, as before; a null content stays null. Measured in docs/perf/s19-walk.md.
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
   * each): one string to clone and to check (entry-receipt.ts checks it is lowercase hex in one pass, where
   * a pattern test per digest was a tenth of the caller's CPU in row 1a).
   */
  readonly sha256s: string;
  /** 1 where the entry has a digest (in `sha256s`), 0 where its digest is null. */
  readonly digested: Uint8Array;
  /** The timestamps back to back, {@link TIMESTAMP_LENGTH} characters each (modified-at.ts builds them). */
  readonly modifiedAts: string;
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

/** Characters of a sha256 digest in hex. */
export const SHA256_HEX_LENGTH = 64;
/** Characters of a record timestamp, `YYYY-MM-DDTHH:MM:SS.mmmZ` (years 0000–9999: modified-at.ts). */
export const TIMESTAMP_LENGTH = 24;

/**
 * Texts longer than this travel as strings of their own: a batch's ASCII texts then stay under 800 KiB
 * (100 × 8 KiB), so an arena of the receiver (entry-receipt.ts) stays below the size at which Node would
 * keep its string outside the heap, and a kept slice pins at most about 1 MB.
 */
const ARENA_TEXT_MAX = 8 * 1024;

/** ASCII text: its UTF-8 length is its length (any other code unit takes two bytes or more). */
const isAscii = (text: string): boolean => Buffer.byteLength(text, 'utf8') === text.length;

/** Packs entries for posting; `[packed.text]` is the transfer list. */
export function packSurfaceEntries(entries: readonly SurfaceEntry[]): PackedSurfaceEntries {
  const count = entries.length;
  const uris: string[] = new Array(count);
  const sha256s: string[] = [];
  const digested = new Uint8Array(count);
  const modifiedAts: string[] = new Array(count);
  const contents: (string | null)[] = new Array(count);
  const sizes = new Float64Array(count);
  const truncated = new Uint8Array(count);
  const textEnds = new Int32Array(count);
  let bytes = 0;
  for (let i = 0; i < count; i++) {
    const entry = entries[i] as SurfaceEntry;
    uris[i] = entry.uri;
    if (entry.sha256 !== null) {
      if (entry.sha256.length !== SHA256_HEX_LENGTH)
        throw new Error(`a digest of ${entry.sha256.length} characters: a bug`);
      sha256s.push(entry.sha256);
      digested[i] = 1;
    }
    if (entry.modifiedAt.length !== TIMESTAMP_LENGTH) {
      throw new Error(`a timestamp of ${entry.modifiedAt.length} characters: a bug`);
    }
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
    sha256s: sha256s.join(''),
    digested,
    modifiedAts: modifiedAts.join(''),
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
 * A batch of manifest entries (SPEC §12) as a pool thread posts it: columns, not objects. Cloning 1,000
 * entry objects wrote every key of every object and made the caller's thread build them again, and each
 * was then read back key by key by the entry rule: ≈ 8 ms of the walking thread and ≈ 1.6 µs an entry on
 * the caller's per 10,000-file manifest (s20-manifest.md). The caller (manifest-receipt.ts) builds each
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
