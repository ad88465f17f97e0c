import type { ScoringExpectation } from '../models/expectation.js';
import type { ComponentIdentifier } from '../models/identifier.js';
import type { SurfaceScorable } from '../models/scorable.js';
import { ScoreSchema } from '../models/score.js';

/**
 * zod builds a schema's parsing internals on that schema's first parse: for a score (its scorable, the
 * scorer's identifier, the expectation, the metadata) ≈ 11 ms of the main thread.
 * `witness score` parses one score, right after the acquisition thread answers, and while it waits for that
 * answer the main thread has nothing to do. {@link warmScoreParsing} parses a score of the same shape
 * then, so that the real one no longer pays for the set-up on the way to the verdict.
 *
 * Nothing is decided by it: the sample is thrown away, and the score the scorer builds is still parsed by
 * `ScoreSchema`, the same rule as before. Only when zod builds its internals moves.
 */

/** A complete score of the shape the file-write scorer builds for `scorable` and `expectation`. */
export function warmUpScore(
  scorable: SurfaceScorable,
  expectation: ScoringExpectation,
  source: ComponentIdentifier,
): Record<string, unknown> {
  return {
    id: 'warm-up',
    status: 'complete',
    value: true,
    scoreType: 'true_false',
    description: '',
    rationale: '',
    scorable,
    scorer: { type: 'FileWriteScorer', version: '1', params: { matchingVersion: 1 }, children: { source } },
    scoredExpectation: expectation,
    observationIds: ['warm-up'],
    createdAt: new Date(0).toISOString(),
    metadata: { acquisition: 'complete', provenUris: ['/'], unknownUris: [], judgementGaps: [] },
  };
}

/** Parses {@link warmUpScore} and discards it; true when it parsed (a test keeps the sample in shape). */
export function warmScoreParsing(
  scorable: SurfaceScorable,
  expectation: ScoringExpectation,
  source: ComponentIdentifier,
): boolean {
  return ScoreSchema.safeParse(warmUpScore(scorable, expectation, source)).success;
}
