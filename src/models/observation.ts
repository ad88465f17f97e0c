import { isDeepStrictEqual } from 'node:util';
import * as z from 'zod';
import { NON_TEXT_PREFIX_BYTES } from './evidence-limits.js';
import { type ComponentIdentifier, ComponentIdentifierSchema } from './identifier.js';
import { matchesLocator, type ParsedLocator, parseLocator } from './locator.js';
import { type JsonObject, JsonObjectSchema, TimestampSchema } from './record.js';
import { type SurfaceScorable, SurfaceScorableSchema, UriSchema } from './scorable.js';
import { ACQUISITION_STATUSES, GAP_REASONS, VIA_MAX_CHARS } from './vocabulary.js';

/**
 * The immutable evidence a source returned (SPEC §3). An observation knows nothing about conditions, so
 * the same one can be judged again later (replay) with a new criterion.
 */

export const GapReasonSchema = z.enum(GAP_REASONS);
export const AcquisitionStatusSchema = z.enum(ACQUISITION_STATUSES);

/** One reason evidence is incomplete, and where (so a person can see which path caused it). */
export const CoverageGapSchema = z.strictObject({
  reason: GapReasonSchema,
  uri: z.string().optional(),
  detail: z.string().optional(),
});
export type CoverageGap = z.infer<typeof CoverageGapSchema>;

export const SurfaceCoverageSchema = z
  .strictObject({
    complete: z.boolean(),
    reasons: z.array(GapReasonSchema),
    gaps: z.array(CoverageGapSchema),
  })
  .superRefine((coverage, ctx) => {
    const expected = uniqueReasons(coverage.gaps);
    if (!isDeepStrictEqual(coverage.reasons, expected)) {
      ctx.addIssue({
        code: 'custom',
        path: ['reasons'],
        message: `must list each gap reason once, in first-seen order: expected ${JSON.stringify(expected)}`,
      });
    }
    if (coverage.complete && coverage.gaps.length > 0) {
      ctx.addIssue({ code: 'custom', path: ['complete'], message: 'coverage with gaps cannot be complete' });
    }
  });
export type SurfaceCoverage = z.infer<typeof SurfaceCoverageSchema>;

/** Unique gap reasons in first-seen order. */
export function uniqueReasons(gaps: readonly CoverageGap[]): CoverageGap['reason'][] {
  return [...new Set(gaps.map((gap) => gap.reason))];
}

const SHA256_PATTERN = /^[0-9a-f]{64}$/;
const Sha256Schema = z.string().regex(SHA256_PATTERN, 'sha256 must be 64 lowercase hex digits');

/**
 * The symbolic links a read followed to reach an entry's uri, each `<uri of the link> -> <its stored
 * target>`, several joined by `, ` (`/.git -> real-git`). Absent when no link was followed. Only links that
 * resolve beneath the root are ever followed (SPEC §13); it is what git or a shell would have reached.
 */
export const ViaSchema = z.string().min(1).max(VIA_MAX_CHARS);

// Declared with the budgets (no schema library there: the read worker needs it too).
export { NON_TEXT_PREFIX_BYTES };

export const SurfaceEntrySchema = z
  .strictObject({
    uri: UriSchema,
    sizeBytes: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
    sha256: Sha256Schema.nullable(),
    modifiedAt: TimestampSchema,
    content: z.string().nullable(),
    contentTruncated: z.boolean(),
    via: ViaSchema.optional(),
    /**
     * The file is not text (SPEC §13: bytes that are not UTF-8, or a NUL byte): `content` keeps only a
     * bounded prefix (the longest UTF-8 start of its first {@link NON_TEXT_PREFIX_BYTES} bytes, perhaps
     * empty) and is marked truncated, so a `contains` found there proves and nothing else is decided from
     * it; the length and digest stand for the rest.
     */
    notText: z.literal(true).optional(),
  })
  .superRefine((entry, ctx) => {
    if (entry.notText === true && !entry.contentTruncated) {
      ctx.addIssue({
        code: 'custom',
        path: ['contentTruncated'],
        message: 'an entry that is not text keeps only a prefix, so its content must be marked truncated',
      });
    }
    if (
      entry.notText === true &&
      entry.content !== null &&
      Buffer.byteLength(entry.content) > NON_TEXT_PREFIX_BYTES
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['content'],
        message: `an entry that is not text keeps at most ${NON_TEXT_PREFIX_BYTES} bytes of it`,
      });
    }
    if (entry.contentTruncated && entry.content === null) {
      ctx.addIssue({
        code: 'custom',
        path: ['content'],
        message: 'a truncated entry must retain its content prefix',
      });
    }
    if (entry.content !== null && Number.isSafeInteger(entry.sizeBytes) && entry.sizeBytes >= 0) {
      // Retained text is the file's own bytes: all of them unless truncated, a prefix when truncated.
      // A record whose text disagrees with its size was edited or forged, and would replay wrongly.
      const textBytes = Buffer.byteLength(entry.content, 'utf8');
      if (entry.contentTruncated ? textBytes > entry.sizeBytes : textBytes !== entry.sizeBytes) {
        ctx.addIssue({
          code: 'custom',
          path: ['content'],
          message: entry.contentTruncated
            ? `a truncated text of ${textBytes} bytes cannot come from a file of ${entry.sizeBytes} bytes`
            : `a complete text of ${textBytes} bytes must be the whole file of ${entry.sizeBytes} bytes`,
        });
      }
    }
    if (entry.sha256 === null && entry.content !== null && !entry.contentTruncated) {
      ctx.addIssue({
        code: 'custom',
        path: ['contentTruncated'],
        message: 'an entry without a digest was not read in full, so its content must be marked truncated',
      });
    }
  });
export type SurfaceEntry = z.infer<typeof SurfaceEntrySchema>;

/** The format rule zod applies to {@link TimestampSchema}, read from the schema itself (one rule). */
const TIMESTAMP_PATTERN: RegExp = (() => {
  const pattern = (TimestampSchema.def as { pattern?: unknown }).pattern;
  // Internal: a zod upgrade changed what this reads, at module load, long before any user input.
  if (!(pattern instanceof RegExp) || pattern.flags !== '') {
    throw new Error(
      'zod no longer exposes the datetime pattern of TimestampSchema: update acceptSurfaceEntry',
    );
  }
  return pattern;
})();

/** `String.prototype.isWellFormed` (Node ≥ 20; not yet in the compiler's ES2023 lib): false exactly when
 * the string holds an unpaired surrogate, which is what `/\p{Cs}/u` finds in UriSchema. */
const isWellFormed = (text: string): boolean =>
  (text as unknown as { isWellFormed(): boolean }).isWellFormed();

/**
 * @internal The same rule as {@link SurfaceEntrySchema}, hand-written for the main thread's receipt of
 * 100,000 entries (zod's generic machinery was ≈ 5 µs an entry; this is a fraction of one). ONE RULE, TWO
 * IMPLEMENTATIONS: this is allowed only because `surface-entry-fast-path.test.ts` proves, on generated
 * and adversarial inputs, that whatever this accepts the schema accepts with a deep-equal result.
 *
 * It may only be stricter, never looser: `undefined` means "not accepted here", and the caller then
 * parses with the schema itself, which accepts or rejects with its own messages. So a gap in this
 * function can cost speed, never let a forged entry through or refuse a valid one.
 *
 * What it stops, as the schema does: keys the schema does not know (zod's strict object looks at every
 * `for…in` key, own or inherited, so this does too — a `__proto__` key from parsed JSON included); a uri
 * that is empty, holds a NUL (it would name a different path to the kernel) or an unpaired surrogate (it
 * would be encoded as U+FFFD and name a different file); a size that is not a safe non-negative integer; a
 * digest that is not 64 lowercase hex digits; a timestamp that is not UTC ISO-8601 (zod's own pattern);
 * text whose UTF-8 length disagrees with the size (edited or forged evidence, which would replay wrongly);
 * an unread (digestless) entry whose text claims to be whole. Each property is read once, and the result
 * is a fresh plain object in the schema's key order, as zod builds it — so no accessor, prototype or
 * extra symbol of the input survives.
 */
export function acceptSurfaceEntry(value: unknown): SurfaceEntry | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const input = value as Record<string, unknown>;
  const uri = input.uri;
  const sizeBytes = input.sizeBytes;
  const sha256 = input.sha256;
  const modifiedAt = input.modifiedAt;
  const content = input.content;
  const contentTruncated = input.contentTruncated;
  for (const key in input) {
    switch (key) {
      case 'uri':
      case 'sizeBytes':
      case 'sha256':
      case 'modifiedAt':
      case 'content':
      case 'contentTruncated':
        continue;
      default:
        return undefined;
    }
  }
  return acceptSurfaceEntryFields(uri, sizeBytes, sha256, modifiedAt, content, contentTruncated);
}

/**
 * @internal {@link acceptSurfaceEntry} for values already taken out of an object (or never in one: the
 * packed batches of local-file/packed-entries.ts): the same rule, the same fresh plain object, or
 * `undefined` when the schema must decide. `contentUtf8Bytes` is the UTF-8 length of `content` when the
 * caller has proven it (text decoded from bytes it checked are all ASCII: its length), so that 100,000
 * texts are not scanned again; without it the text is measured here. `sha256IsHex`: the caller has proven
 * that `sha256`, if a string, holds only lowercase hex digits (a batch's digests checked in one pass), so
 * only its length is checked here.
 */
export function acceptSurfaceEntryFields(
  uri: unknown,
  sizeBytes: unknown,
  sha256: unknown,
  modifiedAt: unknown,
  content: unknown,
  contentTruncated: unknown,
  contentUtf8Bytes?: number,
  sha256IsHex?: boolean,
): SurfaceEntry | undefined {
  if (typeof uri !== 'string' || uri.length === 0 || uri.includes('\0') || !isWellFormed(uri)) {
    return undefined;
  }
  if (typeof sizeBytes !== 'number' || !Number.isSafeInteger(sizeBytes) || sizeBytes < 0) return undefined;
  if (
    sha256 !== null &&
    (typeof sha256 !== 'string' ||
      !(sha256IsHex === true ? sha256.length === 64 : SHA256_PATTERN.test(sha256)))
  ) {
    return undefined;
  }
  if (typeof modifiedAt !== 'string' || !TIMESTAMP_PATTERN.test(modifiedAt)) return undefined;
  if (typeof contentTruncated !== 'boolean') return undefined;
  if (content === null) {
    if (contentTruncated) return undefined;
  } else {
    if (typeof content !== 'string') return undefined;
    const textBytes = contentUtf8Bytes ?? Buffer.byteLength(content, 'utf8');
    if (contentTruncated ? textBytes > sizeBytes : textBytes !== sizeBytes) return undefined;
    if (sha256 === null && !contentTruncated) return undefined;
  }
  return { uri, sizeBytes, sha256, modifiedAt, content, contentTruncated };
}

/**
 * The payload and observation schemas are built from the schema of the entry list, so the invariants
 * across entries and across the record are written once and hold for both: the public schemas parse each
 * entry, and the internal one used by {@link checkObservationOfCheckedEntries} accepts only a list that
 * {@link checkSurfaceEntries} (or {@link mergeCheckedEntries}) built, checked and froze.
 */
function surfacePayloadSchema(entriesSchema: z.ZodType<SurfaceEntry[]>) {
  return z
    .strictObject({
      kind: z.literal('surface'),
      schemaVersion: z.literal(1),
      scope: SurfaceScorableSchema,
      entries: entriesSchema,
      coverage: SurfaceCoverageSchema,
    })
    .superRefine((payload, ctx) => {
      const uris = payload.entries.map((entry) => entry.uri);
      for (let i = 1; i < uris.length; i++) {
        const previous = uris[i - 1] as string;
        const current = uris[i] as string;
        if (previous === current) {
          ctx.addIssue({
            code: 'custom',
            path: ['entries', i, 'uri'],
            message: `duplicate entry uri ${current}`,
          });
        } else if (previous > current) {
          ctx.addIssue({
            code: 'custom',
            path: ['entries', i, 'uri'],
            message: 'entries must be sorted by uri',
          });
        }
      }
      if (payload.scope.match === 'glob') {
        let locator: ParsedLocator | undefined;
        try {
          locator = parseLocator(payload.scope.uri, 'glob');
        } catch (error) {
          ctx.addIssue({ code: 'custom', path: ['scope', 'uri'], message: (error as Error).message });
        }
        payload.entries.forEach((entry, i) => {
          if (locator !== undefined && !matchesLocator(locator, entry.uri)) {
            ctx.addIssue({
              code: 'custom',
              path: ['entries', i, 'uri'],
              message: `the entry ${JSON.stringify(entry.uri)} is not a path the glob ${payload.scope.uri} can match`,
            });
          }
        });
      }
      if (payload.scope.match === 'exact') {
        payload.entries.forEach((entry, i) => {
          if (entry.uri !== payload.scope.uri) {
            ctx.addIssue({
              code: 'custom',
              path: ['entries', i, 'uri'],
              message: `an exact scope's entries carry the scope's own uri ${payload.scope.uri}`,
            });
          }
        });
      }
    });
}

export const SurfacePayloadSchema = surfacePayloadSchema(z.array(SurfaceEntrySchema));
export type SurfacePayload = z.infer<typeof SurfacePayloadSchema>;

/** @internal The observation schema over a given entry-list schema (the trust cache swaps in checked lists). */
export function observationSchema(entriesSchema: z.ZodType<SurfaceEntry[]>) {
  return z
    .strictObject({
      id: z.string().min(1),
      sourceIdentifier: ComponentIdentifierSchema,
      acquisition: AcquisitionStatusSchema,
      observedAt: TimestampSchema,
      scorable: SurfaceScorableSchema,
      payload: surfacePayloadSchema(entriesSchema),
      metadata: JsonObjectSchema,
    })
    .superRefine((observation, ctx) => {
      if (!isDeepStrictEqual(observation.scorable, observation.payload.scope)) {
        ctx.addIssue({ code: 'custom', path: ['scorable'], message: 'must equal payload.scope' });
      }
      const complete = observation.acquisition === 'complete';
      if (complete !== observation.payload.coverage.complete) {
        ctx.addIssue({
          code: 'custom',
          path: ['acquisition'],
          message: 'acquisition is complete exactly when payload.coverage.complete is true',
        });
      }
      if (
        (observation.acquisition === 'unavailable' || observation.acquisition === 'error') &&
        observation.payload.entries.length > 0
      ) {
        ctx.addIssue({
          code: 'custom',
          path: ['payload', 'entries'],
          message: `an ${observation.acquisition} acquisition carries no entries`,
        });
      }
      if (observation.acquisition === 'partial' && observation.payload.coverage.gaps.length === 0) {
        ctx.addIssue({
          code: 'custom',
          path: ['payload', 'coverage', 'gaps'],
          message: 'a partial acquisition names its gaps',
        });
      }
    });
}

export const ObservationSchema = observationSchema(z.array(SurfaceEntrySchema));
export type Observation = z.infer<typeof ObservationSchema>;

const GAP_REASON_SET: ReadonlySet<unknown> = new Set(GAP_REASONS);
const ACQUISITION_STATUS_SET: ReadonlySet<unknown> = new Set(ACQUISITION_STATUSES);
/** Deeper JSON than this is left to zod (which decides, or overflows the stack, as it always has). */
const FAST_JSON_DEPTH = 32;

/** A plain object (its prototype is `Object.prototype`) whose `for…in` keys are all in `allowed`. */
function strictRecord(value: unknown, allowed: readonly string[]): Record<string, unknown> | undefined {
  if (typeof value !== 'object' || value === null || Object.getPrototypeOf(value) !== Object.prototype) {
    return undefined;
  }
  for (const key in value) if (!allowed.includes(key)) return undefined;
  return value as Record<string, unknown>;
}

const acceptUri = (uri: unknown): uri is string =>
  typeof uri === 'string' && uri.length > 0 && !uri.includes('\0') && isWellFormed(uri);

/** {@link JsonValueSchema}'s rule on the plain shapes, as a fresh copy; `undefined` leaves it to zod. */
function acceptJson(value: unknown, depth: number): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : undefined;
    case 'object': {
      if (value === null) return null;
      if (depth >= FAST_JSON_DEPTH) return undefined;
      if (Array.isArray(value)) {
        if (Object.getPrototypeOf(value) !== Array.prototype) return undefined;
        const out: unknown[] = new Array(value.length);
        for (let i = 0; i < value.length; i++) {
          const item = acceptJson(value[i], depth + 1);
          if (item === undefined) return undefined;
          out[i] = item;
        }
        return out;
      }
      return acceptJsonObject(value, depth);
    }
    default:
      return undefined;
  }
}

/**
 * {@link JsonObjectSchema}'s rule on a plain object of enumerable string keys: a fresh copy with the keys
 * in the order zod's record writes them (`Object.keys` order), or `undefined`. Refused here, and so left to
 * zod: another prototype, an own `__proto__` key, any symbol key, and any value that is not plain JSON.
 */
function acceptJsonObject(value: unknown, depth: number): Record<string, unknown> | undefined {
  if (typeof value !== 'object' || value === null || Object.getPrototypeOf(value) !== Object.prototype) {
    return undefined;
  }
  if (Object.hasOwn(value, '__proto__') || Object.getOwnPropertySymbols(value).length > 0) return undefined;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const child = acceptJson((value as Record<string, unknown>)[key], depth + 1);
    if (child === undefined) return undefined;
    out[key] = child;
  }
  return out;
}

function acceptScorable(value: unknown): SurfaceScorable | undefined {
  const input = strictRecord(value, ['scorableType', 'uri', 'match']);
  if (input === undefined) return undefined;
  const { scorableType, uri, match } = input;
  // An absent `match` (zod's default 'exact') is left to zod.
  if (scorableType !== 'surface' || !acceptUri(uri) || (match !== 'exact' && match !== 'glob')) {
    return undefined;
  }
  return { scorableType, uri, match };
}

function acceptGap(value: unknown): CoverageGap | undefined {
  const input = strictRecord(value, ['reason', 'uri', 'detail']);
  if (input === undefined || !GAP_REASON_SET.has(input.reason)) return undefined;
  const gap: CoverageGap = { reason: input.reason as CoverageGap['reason'] };
  // A present key holding `undefined` is left to zod (it keeps the key).
  if ('uri' in input) {
    if (typeof input.uri !== 'string') return undefined;
    gap.uri = input.uri;
  }
  if ('detail' in input) {
    if (typeof input.detail !== 'string') return undefined;
    gap.detail = input.detail;
  }
  return gap;
}

function acceptCoverage(value: unknown): SurfaceCoverage | undefined {
  const input = strictRecord(value, ['complete', 'reasons', 'gaps']);
  if (input === undefined) return undefined;
  const { complete, reasons, gaps } = input;
  if (typeof complete !== 'boolean') return undefined;
  if (!Array.isArray(reasons) || Object.getPrototypeOf(reasons) !== Array.prototype) return undefined;
  if (!Array.isArray(gaps) || Object.getPrototypeOf(gaps) !== Array.prototype) return undefined;
  const checkedGaps: CoverageGap[] = new Array(gaps.length);
  for (let i = 0; i < gaps.length; i++) {
    const gap = acceptGap(gaps[i]);
    if (gap === undefined) return undefined;
    checkedGaps[i] = gap;
  }
  // Each reason once, in first-seen order (which also makes every element a gap reason).
  const expected = uniqueReasons(checkedGaps);
  if (reasons.length !== expected.length) return undefined;
  for (let i = 0; i < expected.length; i++) if (reasons[i] !== expected[i]) return undefined;
  if (complete && checkedGaps.length > 0) return undefined;
  return { complete, reasons: expected, gaps: checkedGaps };
}

function acceptIdentifier(value: unknown): ComponentIdentifier | undefined {
  // An identifier with `children` is left to zod.
  const input = strictRecord(value, ['type', 'version', 'params']);
  if (input === undefined) return undefined;
  const { type, version } = input;
  if (typeof type !== 'string' || type.length === 0) return undefined;
  if (typeof version !== 'string' || version.length === 0) return undefined;
  const params = acceptJsonObject(input.params, 0);
  if (params === undefined) return undefined;
  return { type, version, params: params as JsonObject };
}

/**
 * @internal The rule of `observationSchema(entriesSchema)`, hand-written for the source's own receipt
 * (zod's parse of one observation record cost ≈ 20–40 µs of the main thread per acquisition, as much as
 * an exact acquisition's own walk). ONE RULE, TWO IMPLEMENTATIONS, allowed only with
 * `observation-fast-path.test.ts`, which proves on generated and listed inputs that whatever this
 * accepts, the schema accepts with a deep-equal result (same keys in the same order).
 *
 * It may only be stricter, never looser: `undefined` means "not accepted here", and the caller then parses
 * with the schema itself, which accepts or rejects with its own messages. Shapes left to zod by design (a
 * source never builds them): a prototype other than `Object.prototype`/`Array.prototype`, a scorable
 * without `match`, an identifier with `children`, an optional key holding `undefined`, symbol keys in
 * JSON, JSON nested deeper than 32 levels.
 *
 * What it stops, as the schema does: unknown keys (`for…in`, own or inherited, as zod's strict objects
 * look); a scope or scorable that is not a well-formed surface locator record, or that differ from each
 * other; an empty id; a timestamp that is not UTC ISO-8601; an unknown acquisition status or gap reason;
 * coverage whose reasons are not its gaps' reasons in first-seen order, or that claims completeness with
 * gaps, or disagrees with the acquisition status; entries on an unavailable or error acquisition; a
 * partial acquisition that names no gap; entries not sorted by uri, duplicated, or not matched by the
 * scope (each glob entry through the same `matchesLocator` the schema calls); metadata and params that are
 * not plain JSON (non-finite numbers, `undefined`, functions, an own `__proto__` key). The entry list is
 * whatever `acceptEntries` accepts (the caller's registered-list check), returned as is. Each property is
 * read once; the result is made of fresh plain objects, so no accessor or prototype of the input survives.
 */
export function acceptObservation(
  value: unknown,
  acceptEntries: (entries: unknown) => SurfaceEntry[] | undefined,
): Observation | undefined {
  const input = strictRecord(value, [
    'id',
    'sourceIdentifier',
    'acquisition',
    'observedAt',
    'scorable',
    'payload',
    'metadata',
  ]);
  if (input === undefined) return undefined;
  const { id, acquisition, observedAt } = input;
  if (typeof id !== 'string' || id.length === 0) return undefined;
  if (!ACQUISITION_STATUS_SET.has(acquisition)) return undefined;
  if (typeof observedAt !== 'string' || !TIMESTAMP_PATTERN.test(observedAt)) return undefined;
  const sourceIdentifier = acceptIdentifier(input.sourceIdentifier);
  const scorable = acceptScorable(input.scorable);
  const metadata = acceptJsonObject(input.metadata, 0);
  if (sourceIdentifier === undefined || scorable === undefined || metadata === undefined) return undefined;

  const payloadInput = strictRecord(input.payload, ['kind', 'schemaVersion', 'scope', 'entries', 'coverage']);
  if (payloadInput === undefined) return undefined;
  if (payloadInput.kind !== 'surface' || payloadInput.schemaVersion !== 1) return undefined;
  const scope = acceptScorable(payloadInput.scope);
  const entries = acceptEntries(payloadInput.entries);
  const coverage = acceptCoverage(payloadInput.coverage);
  if (scope === undefined || entries === undefined || coverage === undefined) return undefined;

  // Across the payload: sorted, unique, every entry matched by the scope.
  for (let i = 1; i < entries.length; i++) {
    if ((entries[i - 1] as SurfaceEntry).uri >= (entries[i] as SurfaceEntry).uri) return undefined;
  }
  if (scope.match === 'glob') {
    let locator: ParsedLocator;
    try {
      locator = parseLocator(scope.uri, 'glob');
    } catch {
      return undefined;
    }
    for (const entry of entries) if (!matchesLocator(locator, entry.uri)) return undefined;
  } else {
    for (const entry of entries) if (entry.uri !== scope.uri) return undefined;
  }
  // Across the record.
  if (
    scorable.scorableType !== scope.scorableType ||
    scorable.uri !== scope.uri ||
    scorable.match !== scope.match
  ) {
    return undefined;
  }
  if ((acquisition === 'complete') !== coverage.complete) return undefined;
  if ((acquisition === 'unavailable' || acquisition === 'error') && entries.length > 0) return undefined;
  if (acquisition === 'partial' && coverage.gaps.length === 0) return undefined;

  return {
    id,
    sourceIdentifier,
    acquisition: acquisition as Observation['acquisition'],
    observedAt,
    scorable,
    payload: { kind: 'surface', schemaVersion: 1, scope, entries, coverage },
    metadata: metadata as JsonObject,
  };
}
