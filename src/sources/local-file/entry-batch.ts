import type { SurfaceEntry } from '../../models/observation.js';

/**
 * A batch of observation entries as it leaves a pool thread: the entries, and the UTF-8 bytes of their
 * texts in one transferred buffer instead of one JavaScript string per file. A reader thread that had to
 * build each file's text as a string kept ~1 KB per file alive in its small young generation until the
 * batch left, and the message copied it once more; here the bytes are copied once into memory outside
 * the JavaScript heap and handed over without a copy. The receiving thread builds each string once, where
 * the entries are checked (local-file-source.ts), and the entry rule is checked on the built entry there
 * as before: nothing about what is accepted changes.
 *
 * Only the texts of whole files that are valid UTF-8 travel as bytes (`buffer.isUtf8`, the same test as
 * the fatal decoder's: overlongs, surrogates and truncated sequences fail it); a prefix, a file that is
 * not UTF-8 and every other case keep `content` as the reader decoded it.
 */
export interface PostedEntries {
  /** An entry whose span in `texts` is set carries `content: null` until {@link openEntryBatch}. */
  entries: SurfaceEntry[];
  texts?: PostedTexts;
}

export interface PostedTexts {
  bytes: ArrayBuffer;
  /** Two per entry: start and end of its text in `bytes`, or -1, -1 when `content` is the entry's own. */
  spans: Int32Array<ArrayBuffer>;
}

const NO_TEXT = -1;
const FIRST_CAPACITY = 64 * 1024;

/** Builds batches on a reader thread: entries and, for those with text bytes, the bytes of their text. */
export class EntryBatchBuilder {
  #entries: SurfaceEntry[] = [];
  #spans: number[] = [];
  #bytes: Buffer | undefined;
  #used = 0;
  #withText = 0;

  get length(): number {
    return this.#entries.length;
  }

  /**
   * Adds an entry; `text` (valid UTF-8, the file's whole content, with `entry.content` null) is copied at
   * once, so the caller may reuse its buffer.
   */
  add(entry: SurfaceEntry, text?: Buffer): void {
    this.#entries.push(entry);
    if (text === undefined) {
      this.#spans.push(NO_TEXT, NO_TEXT);
      return;
    }
    const needed = this.#used + text.length;
    if (this.#bytes === undefined || needed > this.#bytes.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(FIRST_CAPACITY, needed * 2));
      this.#bytes?.copy(grown, 0, 0, this.#used);
      this.#bytes = grown;
    }
    text.copy(this.#bytes, this.#used);
    this.#spans.push(this.#used, needed);
    this.#used = needed;
    this.#withText++;
  }

  /** The batch so far, to post (transfer `texts.bytes`); the builder starts empty again. */
  take(): PostedEntries {
    const entries = this.#entries;
    const posted: PostedEntries = { entries };
    if (this.#withText > 0 && this.#bytes !== undefined) {
      // Exactly the bytes used, in a buffer of their own: the message transfers it whole.
      // allocUnsafeSlow gives each arena an ArrayBuffer of its own (never a shared one).
      const { buffer, byteOffset } = this.#bytes;
      const bytes = (buffer as ArrayBuffer).slice(byteOffset, byteOffset + this.#used);
      posted.texts = { bytes, spans: Int32Array.from(this.#spans) };
      this.#used = 0;
    }
    this.#entries = [];
    this.#spans = [];
    this.#withText = 0;
    return posted;
  }
}

/**
 * The entries of a posted batch with every text built (in place: the batch was made for this thread by
 * the structured clone). Spans outside the bytes are a bug of the sender, never silently shortened.
 */
export function openEntryBatch(posted: PostedEntries): SurfaceEntry[] {
  const { entries, texts } = posted;
  if (texts === undefined) return entries;
  const bytes = Buffer.from(texts.bytes);
  const { spans } = texts;
  if (spans.length !== entries.length * 2) throw new Error('entry batch: one text span per entry expected');
  for (let i = 0; i < entries.length; i++) {
    const start = spans[2 * i] as number;
    if (start === NO_TEXT) continue;
    const end = spans[2 * i + 1] as number;
    const entry = entries[i] as SurfaceEntry;
    if (start < 0 || end < start || end > bytes.length || entry.content !== null) {
      throw new Error(`entry batch: a bad text span for ${JSON.stringify(entry.uri)}`);
    }
    entry.content = bytes.toString('utf8', start, end);
  }
  return entries;
}
