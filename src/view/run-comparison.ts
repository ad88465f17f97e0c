import { type OutcomeTotals, talliedOf, tallyAttempts } from '../attacks/outcome.js';
import type { AttackOutcome } from '../models/vocabulary.js';
import type { AttemptView, RunView } from './read-model.js';

/**
 * Two runs side by side (e.g. the same campaign against a vulnerable and a guarded agent, or one agent
 * before and after a fix): per attack the outcome counts and success rate of each run, and the attempts
 * whose outcome differs between the two. Attempts are paired by attack id and attempt number.
 */

export interface AttackComparison {
  attack: string;
  /** Undefined when the run has no such attack. */
  left: OutcomeTotals | undefined;
  right: OutcomeTotals | undefined;
  control: boolean;
}

export interface ChangedAttempt {
  attack: string;
  attempt: number;
  /** The round of an adaptive attack's chain (paired by round too). */
  round?: number | undefined;
  left: AttackOutcome;
  right: AttackOutcome;
}

export interface RunComparison {
  attacks: AttackComparison[];
  changed: ChangedAttempt[];
  /** Attempts paired in both runs. */
  paired: number;
}

export function compareRuns(left: RunView, right: RunView): RunComparison {
  const order = [
    ...left.run.attacks.map((attack) => attack.id),
    ...right.run.attacks.map((attack) => attack.id),
  ];
  const attackIds = [...new Set(order)];
  const attacks = attackIds.map((attack) => {
    const mine = (run: RunView) => run.attempts.filter((attempt) => attempt.record.attack === attack);
    const totals = (run: RunView) =>
      run.run.attacks.some((entry) => entry.id === attack)
        ? tallyAttempts(
            // A control's row counts its outcomes like an attack's (it is marked as a control).
            mine(run).map((attempt) => ({ ...talliedOf(attempt.record), control: undefined })),
          )
        : undefined;
    const control = [...mine(left), ...mine(right)].some((attempt) => attempt.control);
    return { attack, left: totals(left), right: totals(right), control };
  });
  const key = (attempt: AttemptView) =>
    `${attempt.record.attack}\u0000${attempt.record.attempt}\u0000${attempt.record.round ?? 0}`;
  const rightByKey = new Map(right.attempts.map((attempt) => [key(attempt), attempt]));
  const changed: ChangedAttempt[] = [];
  let paired = 0;
  for (const attempt of left.attempts) {
    const other = rightByKey.get(key(attempt));
    if (other === undefined) continue;
    paired++;
    if (other.record.outcome !== attempt.record.outcome) {
      changed.push({
        attack: attempt.record.attack,
        attempt: attempt.record.attempt,
        round: attempt.record.round,
        left: attempt.record.outcome,
        right: other.record.outcome,
      });
    }
  }
  return { attacks, changed, paired };
}
