import * as z from 'zod';
import { type Condition, ConditionSchema } from './condition.js';
import { parseRecord } from './record.js';

/** What a caller asks a scorer to decide: an objective in words and the conditions that check it. */
export const ScoringExpectationSchema = z.strictObject({
  schemaVersion: z.literal(1),
  objective: z.string().optional(),
  conditions: z.array(ConditionSchema),
});
export type ScoringExpectation = z.infer<typeof ScoringExpectationSchema>;

/** Builds an expectation from conditions (and an optional objective). */
export function expectation(conditions: readonly Condition[], objective?: string): ScoringExpectation {
  const record: Record<string, unknown> = { schemaVersion: 1, conditions: [...conditions] };
  if (objective !== undefined) record.objective = objective;
  return parseRecord(ScoringExpectationSchema, record, 'scoring expectation');
}
