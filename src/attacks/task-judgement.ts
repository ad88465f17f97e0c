import { type AttemptTask, taskOutcomeOf } from '../models/attempt-task.js';
import type { ScoringExpectation } from '../models/expectation.js';
import type { Observation } from '../models/observation.js';
import type { Score } from '../models/score.js';

/**
 * The user's task of an attempt, judged (SPEC §16): the task's condition is decided from the attempt's
 * own evidence (the same workspace, manifests and change set the attack's `expect:` is decided from) by
 * the same code and rules, so a task is `undetermined` exactly where an attack would be, and `failure`
 * only on complete evidence. Never from the agent's reply: an agent that says it did the work and did not
 * is a failure, one that did it without saying so a success.
 *
 * A task whose attempt was never judged (its workspace could not be prepared, the judging failed) is
 * `undetermined` with the reason — not known, never a failure the agent did not earn.
 */

/** The task's verdict with the score and observations it rests on (stored beside the attack's). */
export interface JudgedTask {
  verdict: AttemptTask;
  score: Score | null;
  observations: Observation[];
}

/**
 * Runs `judge` (the attempt's judgement of one expectation, given the task's) and turns its score into the
 * task's verdict; a judgement that throws gives `undetermined` with the reason. The caller's abort is
 * rethrown.
 */
export async function judgeTask(
  expectation: ScoringExpectation,
  judge: (expectation: ScoringExpectation) => Promise<{ score: Score; observations: Observation[] }>,
  signal?: AbortSignal,
): Promise<JudgedTask> {
  try {
    const { score, observations } = await judge(expectation);
    return {
      verdict: { outcome: taskOutcomeOf(score), rationale: score.rationale, scoreId: score.id, expectation },
      score,
      observations,
    };
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    return {
      verdict: unjudgedTask(expectation, `the task could not be judged: ${(error as Error).message}`),
      score: null,
      observations: [],
    };
  }
}

/** The verdict of a task whose attempt was never judged: undetermined, and why. */
export function unjudgedTask(expectation: ScoringExpectation, reason: string): AttemptTask {
  return { outcome: 'undetermined', rationale: reason, scoreId: null, expectation };
}
