import * as z from 'zod';
import { ComponentIdentifierSchema } from './identifier.js';
import { AcquisitionStatusSchema, SurfaceCoverageSchema, ViaSchema } from './observation.js';
import { JsonObjectSchema, parseRecord, TimestampSchema } from './record.js';
import { SurfaceKindSchema, UriSchema } from './scorable.js';
import { MANIFEST_ENTRY_TYPES, type ManifestEntryType } from './vocabulary.js';

/**
 * A manifest lists every entry of a surface (the attempt's workspace or its home) at one moment (SPEC
 * §12): per entry its uri, type, size, sha256 (complete reads of regular files only), permission bits and
 * link target. Two manifests — one after planting, one after the agent ended — give the change set.
 *
 * It is taken through the same confined, bounded walk as an observation and carries the same coverage
 * vocabulary: an entry that could not be listed or read is a gap, never a silent omission, so a change
 * set built from it can say what it does not know.
 */

// Declared with the locator vocabulary, so that a condition (on every `score` path) does not load the
// manifest schemas; still exported from here for the modules that import it with the manifest.
export { SurfaceKindSchema };
export const ManifestEntryTypeSchema = z.enum(MANIFEST_ENTRY_TYPES);

const SHA256_PATTERN = /^[0-9a-f]{64}$/;
const Sha256Schema = z.string().regex(SHA256_PATTERN, 'sha256 must be 64 lowercase hex digits');

export const ManifestEntrySchema = z
  .strictObject({
    uri: UriSchema,
    type: ManifestEntryTypeSchema,
    /** lstat size for directories, symlinks and others; for a file, the bytes of the handle read. */
    sizeBytes: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
    /** Present only for a regular file read in full. */
    sha256: Sha256Schema.nullable(),
    /** Permission bits (`mode & 0o7777`): setuid, setgid, sticky and rwx for owner, group, others. */
    mode: z.number().int().min(0).max(0o7777),
    /** A symlink's target as stored in the link (never followed); null for every other type. */
    linkTarget: z.string().nullable(),
    /**
     * The links followed to reach this uri (an exact lookup's entry only: the walk records links as
     * links), as on a surface entry (observation.ts).
     */
    via: ViaSchema.optional(),
  })
  .superRefine((entry, ctx) => {
    if (entry.type !== 'file' && entry.sha256 !== null) {
      ctx.addIssue({ code: 'custom', path: ['sha256'], message: 'only a file has a digest' });
    }
    if (entry.type !== 'symlink' && entry.linkTarget !== null) {
      ctx.addIssue({ code: 'custom', path: ['linkTarget'], message: 'only a symlink has a link target' });
    }
  });
export type ManifestEntry = z.infer<typeof ManifestEntrySchema>;

function manifestSchema(entries: z.ZodType<ManifestEntry[]>) {
  return z
    .strictObject({
      schemaVersion: z.literal(1),
      surface: SurfaceKindSchema,
      sourceIdentifier: ComponentIdentifierSchema,
      acquisition: AcquisitionStatusSchema,
      takenAt: TimestampSchema,
      entries,
      coverage: SurfaceCoverageSchema,
      /**
       * Uris looked up on their own beside the walk, each with budgets of its own (SPEC §13: a condition
       * on an exact uri is judged from that uri alone). For each, the entry at that uri in `entries` (or
       * its absence) is the lookup's, and only the gaps that name that very uri can hide it: a budget the
       * walk ran out of elsewhere cannot. Sorted, unique.
       */
      lookups: z.array(UriSchema).optional(),
      metadata: JsonObjectSchema,
    })
    .superRefine(checkManifestInvariants);
}

function checkManifestInvariants(
  manifest: {
    entries: ManifestEntry[];
    acquisition: string;
    coverage: { complete: boolean; gaps: unknown[] };
    lookups?: string[] | undefined;
  },
  ctx: z.RefinementCtx,
): void {
  const lookups = manifest.lookups ?? [];
  for (let i = 1; i < lookups.length; i++) {
    if ((lookups[i - 1] as string) >= (lookups[i] as string)) {
      ctx.addIssue({ code: 'custom', path: ['lookups', i], message: 'lookups are sorted and unique' });
    }
  }
  for (let i = 1; i < manifest.entries.length; i++) {
    const previous = (manifest.entries[i - 1] as ManifestEntry).uri;
    const current = (manifest.entries[i] as ManifestEntry).uri;
    if (previous >= current) {
      ctx.addIssue({
        code: 'custom',
        path: ['entries', i, 'uri'],
        message: previous === current ? `duplicate entry uri ${current}` : 'entries must be sorted by uri',
      });
    }
  }
  if ((manifest.acquisition === 'complete') !== manifest.coverage.complete) {
    ctx.addIssue({
      code: 'custom',
      path: ['acquisition'],
      message: 'acquisition is complete exactly when coverage.complete is true',
    });
  }
  if (
    (manifest.acquisition === 'unavailable' || manifest.acquisition === 'error') &&
    manifest.entries.length > 0
  ) {
    ctx.addIssue({
      code: 'custom',
      path: ['entries'],
      message: `an ${manifest.acquisition} manifest carries no entries`,
    });
  }
  if (manifest.acquisition === 'partial' && manifest.coverage.gaps.length === 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['coverage', 'gaps'],
      message: 'a partial manifest names its gaps',
    });
  }
}

export const ManifestSchema = manifestSchema(z.array(ManifestEntrySchema));
export type Manifest = z.infer<typeof ManifestSchema>;

/**
 * Entry lists checked here: each is frozen when it is registered, and every element is an entry checked
 * against the entry rule and frozen before the list was built (a checked manifest's own list included).
 * A frozen array cannot gain, lose or swap an element, and a frozen entry cannot change, so membership
 * here proves every element was checked and is unchanged since — one WeakSet entry per list, not per
 * entry (a WeakSet of entries cost the caller's thread 0.7–2.5 µs an entry with its share of the
 * collector's work: 7–25 ms per 10,000-file manifest).
 */
const checkedEntryLists = new WeakSet<readonly ManifestEntry[]>();

function registered(entries: ManifestEntry[]): ManifestEntry[] {
  Object.freeze(entries);
  checkedEntryLists.add(entries);
  return entries;
}

/** Validates a manifest (from a source, a file or a database) and deep-freezes it: it is evidence. */
export function checkManifest(value: unknown): Manifest {
  const manifest = parseRecord(ManifestSchema, value, 'manifest');
  deepFreeze(manifest);
  checkedEntryLists.add(manifest.entries);
  return manifest;
}

/**
 * Validates manifest entries as they arrive in batches from a walk still running, so that validation
 * overlaps the walk: each through {@link acceptManifestEntry} (the entry rule, hand-written) or, when that
 * does not accept it, {@link ManifestEntrySchema} itself (which throws naming the first invalid entry).
 * Each entry kept is a fresh frozen plain object, and the list is frozen and registered, so
 * {@link pickCheckedManifestEntries} and {@link checkManifestReusingEntries} take it as it is.
 */
export function checkManifestEntries(batch: readonly unknown[]): ManifestEntry[] {
  const checked: ManifestEntry[] = new Array(batch.length);
  for (let i = 0; i < batch.length; i++) {
    const value = batch[i];
    const entry = acceptManifestEntry(value) ?? parseRecord(ManifestEntrySchema, value, 'manifest entry');
    // Every value of an entry is a primitive: freezing the object freezes all of it.
    checked[i] = Object.freeze(entry);
  }
  return registered(checked);
}

/**
 * {@link checkManifestEntries} for entries whose values arrive apart rather than as objects (the packed
 * batches of local-file/packed-entries.ts): each entry is checked by the same rule when it is added, and
 * {@link list} gives the frozen, registered list once every entry was added.
 */
export class CheckedManifestEntries {
  readonly #entries: ManifestEntry[] = [];
  #done = false;

  add(
    uri: unknown,
    type: unknown,
    sizeBytes: unknown,
    sha256: unknown,
    mode: unknown,
    linkTarget: unknown,
    /** The links an exact lookup followed, when any (such an entry is checked by the schema itself). */
    via?: unknown,
  ): void {
    if (this.#done) throw new TypeError('CheckedManifestEntries: add after list(): a bug');
    if (via !== undefined) {
      const linked = parseRecord(
        ManifestEntrySchema,
        { uri, type, sizeBytes, sha256, mode, linkTarget, via },
        'manifest entry',
      );
      this.#entries.push(Object.freeze(linked));
      return;
    }
    const entry =
      acceptManifestEntryFields(uri, type, sizeBytes, sha256, mode, linkTarget) ??
      parseRecord(ManifestEntrySchema, { uri, type, sizeBytes, sha256, mode, linkTarget }, 'manifest entry');
    this.#entries.push(Object.freeze(entry));
  }

  /** The checked list: frozen and registered (no entry can be added after). */
  list(): ManifestEntry[] {
    this.#done = true;
    return registered(this.#entries);
  }
}

/**
 * A new checked list made of entries of checked lists, picked by position: `picks` holds (list, index)
 * pairs, list being a position in `lists`. Every list must be one checked here (registered by
 * {@link checkManifestEntries}, {@link CheckedManifestEntries} or {@link checkManifest}), and every pick
 * must name an element of it: so the result holds only checked entries, and is registered in turn.
 */
export function pickCheckedManifestEntries(
  lists: readonly (readonly ManifestEntry[])[],
  picks: Int32Array,
): ManifestEntry[] {
  for (const list of lists) {
    if (!checkedEntryLists.has(list)) {
      throw new TypeError('pickCheckedManifestEntries was given a list no manifest check built: a bug');
    }
  }
  if (picks.length % 2 !== 0) throw new TypeError('pickCheckedManifestEntries: picks come in pairs: a bug');
  const picked: ManifestEntry[] = new Array(picks.length / 2);
  for (let k = 0; k < picked.length; k++) {
    const entry = lists[picks[2 * k] as number]?.[picks[2 * k + 1] as number];
    if (entry === undefined) throw new TypeError(`pick ${k} names no entry of its list: a bug`);
    picked[k] = entry;
  }
  return registered(picked);
}

const isManifestEntryType = (value: unknown): value is ManifestEntryType =>
  (MANIFEST_ENTRY_TYPES as readonly unknown[]).includes(value);

/** `String.prototype.isWellFormed` (Node ≥ 20; not yet in the compiler's ES2023 lib): false exactly when
 * the string holds an unpaired surrogate, which is what `/\p{Cs}/u` finds in UriSchema. */
const isWellFormed = (text: string): boolean =>
  (text as unknown as { isWellFormed(): boolean }).isWellFormed();

/**
 * @internal The same rule as {@link ManifestEntrySchema}, hand-written for the main thread's receipt of a
 * manifest's entries while its walk runs (zod's generic machinery was ≈ 7 µs an entry, 73 ms of the main
 * thread per 10,000-file manifest, competing with the walk's two threads for two cores; this is a fraction
 * of a microsecond). ONE RULE, TWO IMPLEMENTATIONS: allowed only because `manifest-entry-fast-path.test.ts`
 * proves, on generated and adversarial inputs, that whatever this accepts the schema accepts with a
 * deep-equal result.
 *
 * It may only be stricter, never looser: `undefined` means "not accepted here", and the caller then parses
 * with the schema itself, which accepts or rejects with its own messages. So a gap in this function can
 * cost speed, never let a forged entry through or refuse a valid one.
 *
 * What it stops, as the schema does: keys the schema does not know (zod's strict object looks at every
 * `for…in` key, own or inherited, so this does too); a uri that is empty, holds a NUL (it would name a
 * different path to the kernel) or an unpaired surrogate (it would name a different file); a type outside
 * the vocabulary; a size that is not a safe non-negative integer; a digest that is not 64 lowercase hex
 * digits, or a digest on anything but a file (a forged "unchanged" directory); permission bits outside
 * 0–0o7777; a link target that is not text, or one on anything but a symlink. Each property is read once,
 * and the result is a fresh plain object in the schema's key order, as zod builds it — so no accessor,
 * prototype or extra symbol of the input survives.
 */
export function acceptManifestEntry(value: unknown): ManifestEntry | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const input = value as Record<string, unknown>;
  const uri = input.uri;
  const type = input.type;
  const sizeBytes = input.sizeBytes;
  const sha256 = input.sha256;
  const mode = input.mode;
  const linkTarget = input.linkTarget;
  for (const key in input) {
    switch (key) {
      case 'uri':
      case 'type':
      case 'sizeBytes':
      case 'sha256':
      case 'mode':
      case 'linkTarget':
        continue;
      default:
        return undefined;
    }
  }
  return acceptManifestEntryFields(uri, type, sizeBytes, sha256, mode, linkTarget);
}

/**
 * @internal {@link acceptManifestEntry} for an entry given as its six fields (each read once by the
 * caller; no other key can come with them): the same rule, the same fresh plain object, or `undefined`.
 */
export function acceptManifestEntryFields(
  uri: unknown,
  type: unknown,
  sizeBytes: unknown,
  sha256: unknown,
  mode: unknown,
  linkTarget: unknown,
): ManifestEntry | undefined {
  if (typeof uri !== 'string' || uri.length === 0 || uri.includes('\0') || !isWellFormed(uri)) {
    return undefined;
  }
  if (!isManifestEntryType(type)) return undefined;
  if (typeof sizeBytes !== 'number' || !Number.isSafeInteger(sizeBytes) || sizeBytes < 0) return undefined;
  if (sha256 !== null && (type !== 'file' || typeof sha256 !== 'string' || !SHA256_PATTERN.test(sha256))) {
    return undefined;
  }
  if (typeof mode !== 'number' || !Number.isSafeInteger(mode) || mode < 0 || mode > 0o7777) return undefined;
  if (linkTarget !== null && (type !== 'symlink' || typeof linkTarget !== 'string')) return undefined;
  return { uri, type, sizeBytes, sha256, mode, linkTarget };
}

/** A list of entries checked here (registered: every entry passed the entry rule). */
const CheckedEntriesSchema = z.custom<ManifestEntry[]>(
  (value) => Array.isArray(value) && checkedEntryLists.has(value),
  'entries were not validated',
);
const ManifestOfCheckedEntriesSchema = manifestSchema(CheckedEntriesSchema);

/**
 * {@link checkManifest} for a manifest whose entry list was checked already (a source's: its batches were
 * checked as they arrived, and a final manifest's list picks from them and from its baseline's list by
 * {@link pickCheckedManifestEntries}): a registered list is taken as it is — every entry in it passed the
 * entry rule and is frozen — and every rule across entries and the record is checked as usual. Any other
 * value is checked in full by checkManifest. The result is the same record checkManifest would return.
 */
export function checkManifestReusingEntries(value: unknown): Manifest {
  const entries = (value as { entries?: unknown } | null)?.entries;
  if (!Array.isArray(entries) || !checkedEntryLists.has(entries)) return checkManifest(value);
  const manifest = parseRecord(ManifestOfCheckedEntriesSchema, value, 'manifest');
  deepFreeze(manifest);
  checkedEntryLists.add(manifest.entries);
  return manifest;
}

function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  for (const child of Object.values(value)) deepFreeze(child);
  Object.freeze(value);
}

/** Sorted uri order, the one every manifest, change set and observation uses. */
export function compareUris(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
