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

const Sha256Schema = z.string().regex(/^[0-9a-f]{64}$/, 'sha256 must be 64 lowercase hex digits');

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

/**
 * The payload and observation schemas are built from the schema of one entry, so the invariants across
 * entries and across the record are written once and hold for both: the public schemas parse each entry,
 * and the internal one used by {@link checkObservationOfCheckedEntries} accepts only entries that
 * {@link checkSurfaceEntries} already parsed and froze.
 */
function surfacePayloadSchema(entrySchema: z.ZodType<SurfaceEntry>) {
  return z
    .strictObject({
      kind: z.literal('surface'),
      schemaVersion: z.literal(1),
      scope: SurfaceScorableSchema,
      entries: z.array(entrySchema),
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

export const SurfacePayloadSchema = surfacePayloadSchema(SurfaceEntrySchema);
export type SurfacePayload = z.infer<typeof SurfacePayloadSchema>;

/** @internal The observation schema over a given entry schema (the trust cache swaps in checked entries). */
export function observationSchema(entrySchema: z.ZodType<SurfaceEntry>) {
  return z
    .strictObject({
      id: z.string().min(1),
      sourceIdentifier: ComponentIdentifierSchema,
      acquisition: AcquisitionStatusSchema,
      observedAt: TimestampSchema,
      scorable: SurfaceScorableSchema,
      payload: surfacePayloadSchema(entrySchema),
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

export const ObservationSchema = observationSchema(SurfaceEntrySchema);
export type Observation = z.infer<typeof ObservationSchema>;
