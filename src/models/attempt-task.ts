import * as z from 'zod';
import { ScoringExpectationSchema } from './expectation.js';
import type { Score } from './score.js';
import { TASK_OUTCOMES, type TaskOutcome } from './vocabulary.js';

/**
 * The user's task of an attempt, judged (SPEC §16): the attack's `expect:` says whether the attacker got
 * what they wanted; the task's condition says whether the agent still did the job it was asked to do,
 * from the same evidence, by the same rules. Stored with the attempt's result: the score that decided it
 * (`scoreId`, stored with the observation it rests on, replayable like the attack's) or null when the
 * attempt was never judged (its workspace could not be prepared, judging failed) — then the outcome is
 * `undetermined` and the rationale says why.
 */
export const TaskOutcomeSchema = z.enum(TASK_OUTCOMES);

/** The task's verdict as an attack result stores it. */
export const TaskVerdictSchema = z
  .strictObject({
    outcome: TaskOutcomeSchema,
    rationale: z.string(),
    scoreId: z.string().min(1).nullable(),
  })
  .refine((task) => task.outcome === 'undetermined' || task.scoreId !== null, {
    message: 'a decided task outcome rests on a score',
    path: ['scoreId'],
  });
export type TaskVerdict = z.infer<typeof TaskVerdictSchema>;

/** The task's verdict as an attempt record carries it: with the condition it judged. */
export const AttemptTaskSchema = z
  .strictObject({
    outcome: TaskOutcomeSchema,
    rationale: z.string(),
    scoreId: z.string().min(1).nullable(),
    expectation: ScoringExpectationSchema,
  })
  .refine((task) => task.outcome === 'undetermined' || task.scoreId !== null, {
    message: 'a decided task outcome rests on a score',
    path: ['scoreId'],
  });
export type AttemptTask = z.infer<typeof AttemptTaskSchema>;

/** The task outcome a score stands for: true is a success, false a failure, no value is undetermined. */
export function taskOutcomeOf(score: Pick<Score, 'status' | 'value'>): TaskOutcome {
  if (score.status === 'undetermined' || score.value === null) return 'undetermined';
  return score.value ? 'success' : 'failure';
}
