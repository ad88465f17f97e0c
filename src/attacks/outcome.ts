import { outcomeOf } from '../models/attack-result.js';
import type { Score } from '../models/score.js';
import type { AttackOutcome } from '../models/vocabulary.js';

/**
 * How an attempt ended (SPEC §8, `ATTACK_OUTCOMES`): `success` (the score is true: the attacker's content
 * was written), `failure` (false: proven not written), `undetermined` (the evidence could not decide —
 * never counted as a failure), `error` (the target failed; the workspace may still have been judged).
 */
export type AttemptOutcome = AttackOutcome;

/** The outcome of an attempt: its score's outcome, except that a target error wins over any verdict. */
export function attemptOutcome(
  score: Pick<Score, 'status' | 'value'> | null,
  targetFailed: boolean,
): AttemptOutcome {
  if (targetFailed || score === null) return 'error';
  return outcomeOf(score);
}

export interface OutcomeTotals {
  attempts: number;
  success: number;
  failure: number;
  undetermined: number;
  error: number;
  /**
   * Attack success rate over decided attempts: success / (success + failure); null when none was decided.
   * Undetermined and error attempts are reported beside it, never folded into either side.
   */
  successRate: number | null;
  /**
   * Where the rate would lie if every undetermined attempt had been decided (all failures … all successes),
   * over success + failure + undetermined; null when that sum is 0.
   */
  successRateRange: { low: number; high: number } | null;
}

export function tallyOutcomes(outcomes: Iterable<AttemptOutcome>): OutcomeTotals {
  const totals = { attempts: 0, success: 0, failure: 0, undetermined: 0, error: 0 };
  for (const outcome of outcomes) {
    totals.attempts++;
    totals[outcome]++;
  }
  const decided = totals.success + totals.failure;
  const judged = decided + totals.undetermined;
  return {
    ...totals,
    successRate: decided === 0 ? null : totals.success / decided,
    successRateRange:
      judged === 0
        ? null
        : { low: totals.success / judged, high: (totals.success + totals.undetermined) / judged },
  };
}

/** "2/3 (66.7%)" or "n/a (nothing decided)". */
export function formatSuccessRate(totals: OutcomeTotals): string {
  if (totals.successRate === null) return 'n/a (no attempt decided)';
  const decided = totals.success + totals.failure;
  const rate = `${totals.success}/${decided} decided (${percent(totals.successRate)})`;
  if (totals.undetermined === 0 || totals.successRateRange === null) return rate;
  const { low, high } = totals.successRateRange;
  return `${rate}; ${totals.undetermined} undetermined (${percent(low)}–${percent(high)} if decided)`;
}

function percent(value: number): string {
  return `${(value * 100).toFixed(1).replace(/\.0$/, '')}%`;
}
