import * as z from 'zod';
import { UndeterminedScoreError } from '../errors.js';
import { ScoringExpectationSchema } from './expectation.js';
import { ComponentIdentifierSchema } from './identifier.js';
import { JsonObjectSchema, TimestampSchema } from './record.js';
import { ScorableSchema } from './scorable.js';
import { SCORE_STATUSES } from './vocabulary.js';

/** A verdict: `complete` with a boolean, or `undetermined` with `null` (SPEC §3). */
export const ScoreSchema = z
  .strictObject({
    id: z.string().min(1),
    status: z.enum(SCORE_STATUSES),
    value: z.boolean().nullable(),
    scoreType: z.literal('true_false'),
    description: z.string(),
    rationale: z.string(),
    scorable: ScorableSchema,
    scorer: ComponentIdentifierSchema,
    scoredExpectation: ScoringExpectationSchema,
    observationIds: z.array(z.string().min(1)),
    messagePieceId: z.string().min(1).optional(),
    createdAt: TimestampSchema,
    metadata: JsonObjectSchema,
  })
  .superRefine((score, ctx) => {
    if ((score.value === null) !== (score.status === 'undetermined')) {
      ctx.addIssue({
        code: 'custom',
        path: ['value'],
        message: 'value is null exactly when status is "undetermined"',
      });
    }
  });
export type Score = z.infer<typeof ScoreSchema>;

/**
 * The boolean of a complete score. An undetermined score has none: reading it throws
 * {@link UndeterminedScoreError} rather than letting "unknown" pass as "false".
 */
export function scoreValue(score: Pick<Score, 'status' | 'value' | 'rationale'>): boolean {
  if (score.status === 'undetermined' || score.value === null) {
    throw new UndeterminedScoreError(
      `the score is undetermined and has no boolean value: ${score.rationale}`,
    );
  }
  return score.value;
}
