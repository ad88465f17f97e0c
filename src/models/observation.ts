import { isDeepStrictEqual } from 'node:util';
import * as z from 'zod';
import { ComponentIdentifierSchema } from './identifier.js';
import { matchesLocator, type ParsedLocator, parseLocator } from './locator.js';
import { JsonObjectSchema, TimestampSchema } from './record.js';
import { SurfaceScorableSchema, UriSchema } from './scorable.js';
import { ACQUISITION_STATUSES, GAP_REASONS } from './vocabulary.js';

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

export const SurfaceEntrySchema = z
  .strictObject({
    uri: UriSchema,
    sizeBytes: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
    sha256: Sha256Schema.nullable(),
    modifiedAt: TimestampSchema,
    content: z.string().nullable(),
    contentTruncated: z.boolean(),
  })
  .superRefine((entry, ctx) => {
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
  if (typeof uri !== 'string' || uri.length === 0 || uri.includes('\0') || !isWellFormed(uri)) {
    return undefined;
  }
  if (typeof sizeBytes !== 'number' || !Number.isSafeInteger(sizeBytes) || sizeBytes < 0) return undefined;
  if (sha256 !== null && (typeof sha256 !== 'string' || !SHA256_PATTERN.test(sha256))) return undefined;
  if (typeof modifiedAt !== 'string' || !TIMESTAMP_PATTERN.test(modifiedAt)) return undefined;
  if (typeof contentTruncated !== 'boolean') return undefined;
  if (content === null) {
    if (contentTruncated) return undefined;
  } else {
    if (typeof content !== 'string') return undefined;
    const textBytes = Buffer.byteLength(content, 'utf8');
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
