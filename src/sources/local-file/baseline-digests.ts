import type { ManifestEntry } from '../../models/manifest.js';
import type { EntryStat } from '../confined-fs/file-stat.js';

/**
 * Digest reuse between the two manifests of one attempt (SPEC §12), like git's index:
 * the baseline keeps, beside each regular file's sha256, the file's *stat key* — device, inode, size,
 * mtime, ctime and st_mode — and the final manifest reuses the baseline's entry for a file whose stat
 * key is unchanged AND whose ctime is strictly older than the moment the baseline was complete
 * (`cleanBeforeMs`, read from the same file system's clock: see ../file-system-clock.ts). Every other
 * file is read and hashed as before.
 *
 * Why an unchanged, old ctime proves unchanged content: no unprivileged process can set a ctime. Any
 * change to an inode — write, truncate, a store through mmap, chmod, chown, link, rename, utimensat
 * (which sets atime and mtime only) — stamps its ctime with the kernel's clock at that instant. The agent
 * starts only after the clean moment was read, so whatever it does to a file leaves a ctime at or after
 * that moment, and such a file is re-read; a ctime *equal* to the moment counts as changed ("racily
 * clean"), because timestamps are as coarse as a clock tick. An agent that rewrites a file and restores
 * its size and mtime (`touch -d`), or swaps in another inode with the same fields, still gets its content
 * hashed. A file whose inode differs (a replacement, a delete-and-recreate, even one that reuses the
 * inode number — its ctime is new) is re-read.
 *
 * Times are compared as Node reports them (milliseconds, doubles: sec × 1e3 + nsec / 1e6, the same
 * formula for the clean moment and for every file, whichever of lstat and statx read them). The
 * conversion is monotone, so an older ctime in milliseconds is an older ctime in nanoseconds: rounding
 * can only make more files racy, never reuse a newer one. On top of that, a file counts as racy unless
 * its ctime is more than {@link CLEAN_MARGIN_MS} older than the clean moment, so no disagreement between
 * two readings of the clock smaller than that can ever reuse a digest.
 *
 * The key is the lstat of the name taken just before the file was read. A manifest is taken while
 * nothing in the sandbox runs (SPEC §11), so that stat describes the bytes hashed; a key is kept only
 * when the read was complete and its size is the stat's.
 */

/** A file is reused only when its ctime is older than the clean moment by more than this. */
export const CLEAN_MARGIN_MS = 1;

/** Manifest entries per batch submitted to a sink (as the walk's observation entries are). */
const MANIFEST_BATCH = 1000;

/** Numbers per entry in a stat-key column: dev, ino, size, mtimeMs, ctimeMs, st_mode (NaN: no key). */
export const STAT_KEY_WIDTH = 6;

/** What the final manifest may reuse (sent to the acquisition thread with the request). */
export interface BaselineDigests {
  /** The baseline's entry uris, in its (sorted) order. */
  uris: string[];
  /** {@link STAT_KEY_WIDTH} numbers per baseline entry, NaN for an entry without a key. */
  keys: Float64Array;
  /**
   * The file system's clock once the baseline was complete: the ctime of a file created then (ms as Node
   * reports it). Only a file whose ctime is strictly older is reused.
   */
  cleanBeforeMs: number;
  /** The device the clean moment was read on: a file on any other device is read, never reused. */
  dev: number;
}

/** How the final manifest's files were decided; stored in its metadata so replay sees the shortcut. */
export interface DigestReuseCounts {
  /** Digests reused from the baseline (`carried`: the stored metadata's name, kept for stored records). */
  carried: number;
  /** Stat key unchanged but ctime not older than the clean moment: re-read (racily clean). */
  racy: number;
  /** In the baseline with a key, but the key differs now (or another device): re-read. */
  changed: number;
}

/** The per-walk state: the baseline's keys (when reusing) and the keys of the manifest being taken. */
export class ManifestRecorder {
  readonly counts: DigestReuseCounts = { carried: 0, racy: 0, changed: 0 };
  readonly #request: BaselineDigests | undefined;
  /** The walk meets files in nearly the baseline's order: try the next keyed entry before searching. */
  #cursor = 0;
  /** Baseline indices of the files reused, in the order the walk met them. */
  readonly #reused: number[] = [];
  /** Stat keys by position in the walk's manifest; NaN where an entry has none. */
  #keys = new Float64Array(1024 * STAT_KEY_WIDTH).fill(Number.NaN);
  /** The uri of every entry the walk recorded, in walk order (posted ones included). */
  readonly #walkUris: string[] = [];
  /**
   * Files submitted to a reader whose read has not come back yet, by walk position, with the lstat their
   * key would be (see {@link addAwaiting}). Nothing from the first of them on is submitted to the sink.
   */
  readonly #awaiting = new Map<number, EntryStat>();
  /** Walk positions before this one were submitted to the sink. */
  #posted = 0;
  /** Walk positions before this one are settled (none awaits its read). */
  #ready = 0;

  /**
   * @param pending the walk's manifest: entries not yet submitted to `sink`, in walk order.
   * @param sink receives full batches while the walk runs (the acquisition thread posts them, so their
   * transfer and validation overlap the walk); without one every entry stays in `pending`.
   */
  constructor(
    request: BaselineDigests | undefined,
    readonly pending: ManifestEntry[],
    readonly sink?: (batch: ManifestEntry[]) => void,
  ) {
    this.#request = request;
  }

  /** True when this walk may reuse digests from a baseline (every file's stat is then needed first). */
  get reusesDigests(): boolean {
    return this.#request !== undefined;
  }

  /** Adds an entry to the manifest; `keyStat` when a later manifest may reuse it (a file hashed in full). */
  add(entry: ManifestEntry, keyStat?: EntryStat): void {
    const index = this.#walkUris.length;
    this.#walkUris.push(entry.uri);
    if (keyStat !== undefined) this.#record(index, keyStat);
    this.pending.push(entry);
    this.#post();
  }

  /**
   * Adds, in walk order, the entry of a file just submitted to a reader (either thread: read-lanes.ts),
   * whose size and digest are not known yet; {@link settleRead} completes it. `stat` is the lstat the
   * file's key would be. Returns the entry's walk position.
   */
  addAwaiting(entry: ManifestEntry, stat: EntryStat): number {
    const index = this.#walkUris.length;
    this.#walkUris.push(entry.uri);
    this.#awaiting.set(index, stat);
    this.pending.push(entry);
    return index;
  }

  /**
   * Completes the awaiting entry at walk position `index` with what its reader read: the reader's size
   * and digest, or (`sizeBytes` undefined: the reader made no entry, its gap says why) the lstat size and
   * no digest — exactly what the entry was when this thread read every file itself. The key is kept only
   * when the whole file was hashed and its size is the stat's, as for a file read at once.
   */
  settleRead(index: number, sizeBytes: number | undefined, sha256: string | null): void {
    const stat = this.#awaiting.get(index);
    if (stat === undefined) throw new Error(`manifest entry ${index} was not awaiting a read: a bug`);
    this.#awaiting.delete(index);
    const entry = this.pending[index - this.#posted] as ManifestEntry;
    entry.sizeBytes = sizeBytes ?? stat.size;
    entry.sha256 = sizeBytes === undefined ? null : sha256;
    if (entry.sha256 !== null && sizeBytes === stat.size) this.#record(index, stat);
    this.#post();
  }

  /** Hands full batches of settled entries to the sink, in walk order, while the walk runs. */
  #post(): void {
    const sink = this.sink;
    if (sink === undefined) return;
    const total = this.#walkUris.length;
    while (this.#ready < total && !this.#awaiting.has(this.#ready)) this.#ready++;
    if (this.#ready - this.#posted < MANIFEST_BATCH) return;
    const count = this.#ready - this.#posted;
    this.#posted = this.#ready;
    sink(this.pending.splice(0, count));
  }

  /**
   * The baseline entry index to reuse for this file (lstat `stat`) when it provably has not changed
   * since the baseline; undefined when it must be read.
   */
  unchangedBaselineEntry(uri: string, stat: EntryStat): number | undefined {
    const request = this.#request;
    if (request === undefined) return undefined;
    const at = this.#find(request, uri);
    if (at === undefined) return undefined;
    const key = request.keys;
    const o = at * STAT_KEY_WIDTH;
    const same =
      stat.dev === request.dev &&
      key[o] === stat.dev &&
      key[o + 1] === stat.ino &&
      key[o + 2] === stat.size &&
      key[o + 3] === stat.mtimeMs &&
      key[o + 4] === stat.ctimeMs &&
      key[o + 5] === stat.mode;
    if (!same) {
      this.counts.changed++;
      return undefined;
    }
    if (!(stat.ctimeMs < request.cleanBeforeMs - CLEAN_MARGIN_MS)) {
      this.counts.racy++;
      return undefined;
    }
    this.counts.carried++;
    this.#reused.push(at);
    return at;
  }

  /** Records the stat key of the entry at walk position `index`, for a later manifest to reuse from. */
  #record(index: number, stat: EntryStat): void {
    const o = index * STAT_KEY_WIDTH;
    if (o + STAT_KEY_WIDTH > this.#keys.length) {
      const grown = new Float64Array(Math.max(this.#keys.length * 2, o + STAT_KEY_WIDTH)).fill(Number.NaN);
      grown.set(this.#keys);
      this.#keys = grown;
    }
    this.#keys[o] = stat.dev;
    this.#keys[o + 1] = stat.ino;
    this.#keys[o + 2] = stat.size;
    this.#keys[o + 3] = stat.mtimeMs;
    this.#keys[o + 4] = stat.ctimeMs;
    this.#keys[o + 5] = stat.mode;
  }

  /**
   * How the walk's manifest ends. `order` lists walk positions in uri order; `manifest` is the entries
   * still pending — sorted by uri when there is no sink (nothing was posted), else in walk order, to be
   * appended to the posted ones and put in `order`. `reused` holds the baseline indices of the reused
   * files, ascending (so their uris are sorted too), and `keys` the stat keys of the manifest the two
   * make together, merged by uri ({@link mergeReused}), {@link STAT_KEY_WIDTH} numbers per entry, NaN
   * for an entry without a key (a reused file's key is the baseline's: reusing required them equal).
   */
  finish(): { manifest: ManifestEntry[]; order?: Int32Array; reused: Int32Array; keys: Float64Array } {
    if (this.#awaiting.size > 0)
      throw new Error(`${this.#awaiting.size} manifest reads never settled: a bug`);
    const uris = this.#walkUris;
    const order = Int32Array.from(uris.keys());
    // The walk lists each directory's names sorted and visits them depth first, which is uri order unless
    // a name holds a character below '/' (then a directory's entries sort after a sibling's): the sort,
    // 6–17 ms per 10,000 entries here, is needed only then.
    if (!inUriOrder(uris)) {
      order.sort((i, j) => {
        const a = uris[i] as string;
        const b = uris[j] as string;
        return a < b ? -1 : a > b ? 1 : 0;
      });
    }
    const sortedUris = Array.from(order, (i) => ({ uri: uris[i] as string }));
    const reused = Int32Array.from(this.#reused).sort();
    const request = this.#request;
    const keys = sharedStatKeys(order.length + reused.length);
    const walkKeys = this.#keys;
    const available = Math.floor(walkKeys.length / STAT_KEY_WIDTH);
    let k = 0;
    mergeReused(
      sortedUris,
      reused,
      (at) => request?.uris[at] as string,
      (walked) => {
        const i = order[walked] as number;
        if (i < available) copyKey(walkKeys, i, keys, k);
        k++;
      },
      (at) => {
        if (request !== undefined) copyKey(request.keys, at, keys, k);
        k++;
      },
    );
    if (this.sink !== undefined) return { manifest: this.pending, order, reused, keys };
    return { manifest: Array.from(order, (i) => this.pending[i] as ManifestEntry), reused, keys };
  }

  /** The baseline index of the keyed entry named `uri`, if any. */
  #find(request: BaselineDigests, uri: string): number | undefined {
    const { uris, keys } = request;
    while (this.#cursor < uris.length && Number.isNaN(keys[this.#cursor * STAT_KEY_WIDTH])) this.#cursor++;
    if (uris[this.#cursor] === uri) return this.#cursor++;
    // Off the expected path (a name sorting before '/', or files created or deleted): binary search.
    let low = 0;
    let high = uris.length - 1;
    while (low <= high) {
      const mid = (low + high) >>> 1;
      const here = uris[mid] as string;
      if (here === uri) {
        this.#cursor = mid + 1;
        return Number.isNaN(keys[mid * STAT_KEY_WIDTH]) ? undefined : mid;
      }
      if (here < uri) low = mid + 1;
      else high = mid - 1;
    }
    return undefined;
  }
}

/** True when every uri sorts strictly after the one before it. */
function inUriOrder(uris: readonly string[]): boolean {
  for (let i = 1; i < uris.length; i++) if (!((uris[i - 1] as string) < (uris[i] as string))) return false;
  return true;
}

/**
 * A stat-key column for `entries` entries, all NaN (no key), in shared memory: the keys go from the
 * walking thread to the caller's thread with the manifest, and from there to the thread of the final
 * manifest with its request, and a SharedArrayBuffer crosses threads without the two copies a structured
 * clone of a Float64Array makes (≈ 1.9 ms per 10,000 entries each way, measured). The column is written
 * only here, by the walk that made it, before it is posted; no code writes it afterwards (the caller keeps
 * it private to the source, and a final manifest's walk only reads its request's keys), so sharing it
 * changes no reuse decision.
 */
export function sharedStatKeys(entries: number): Float64Array {
  const bytes = entries * STAT_KEY_WIDTH * Float64Array.BYTES_PER_ELEMENT;
  return new Float64Array(new SharedArrayBuffer(bytes)).fill(Number.NaN);
}

/** Copies the stat key at entry `from` of `source` to entry `to` of `target` (no subarray views made). */
function copyKey(source: Float64Array, from: number, target: Float64Array, to: number): void {
  const s = from * STAT_KEY_WIDTH;
  const t = to * STAT_KEY_WIDTH;
  for (let j = 0; j < STAT_KEY_WIDTH; j++) target[t + j] = source[s + j] as number;
}

/**
 * Visits the final manifest in uri order: `entries` (sorted, read by this walk) merged with the reused
 * baseline indices (ascending, so sorted by uri too). A uri is in one list or the other, never both. The
 * acquisition thread and the source both merge with this, so the keys line up with the entries.
 */
export function mergeReused<T extends { uri: string }>(
  entries: readonly T[],
  reused: Int32Array,
  uriOf: (at: number) => string,
  onEntry: (index: number) => void,
  onReused: (at: number) => void,
): void {
  let i = 0;
  let c = 0;
  while (i < entries.length || c < reused.length) {
    const at = reused[c];
    if (at === undefined || (i < entries.length && (entries[i] as T).uri < uriOf(at))) onEntry(i++);
    else {
      onReused(at);
      c++;
    }
  }
}
