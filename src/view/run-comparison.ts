import type { OutcomeTotals } from '../attacks/outcome.js';
import type { AttackOutcome } from '../models/vocabulary.js';
import type { RunSummary } from '../render/run-summary.js';

/**
 * Two runs side by side (e.g. the same campaign against a vulnerable and a guarded agent, or one agent
 * before and after a fix): per attack the outcome counts and success rate of each run, from the runs'
 * counts alone ({@link compareAttacks}), and the attempts whose outcome differs between the two, paired
 * by attack id and attempt number ({@link ChangedAttempts}, bounded).
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

export interface ChangedAttempts {
  /** The first changes, in attack order of the left run, then attempt number. */
  changed: ChangedAttempt[];
  /** How many changed in all (more than `changed` holds when a bound cut the list). */
  total: number;
  /** Attempts paired in both runs. */
  paired: number;
}

/** Per attack (the left run's attacks, then the right run's others), each run's totals. */
export function compareAttacks(left: RunSummary, right: RunSummary): AttackComparison[] {
  const ids = [...new Set([...left.attacks, ...right.attacks].map((attack) => attack.id))];
  return ids.map((attack) => {
    const mine = (summary: RunSummary) => summary.attacks.find((entry) => entry.id === attack);
    const l = mine(left);
    const r = mine(right);
    return { attack, left: l?.totals, right: r?.totals, control: l?.control === true || r?.control === true };
  });
}

/** Most changed attempts listed on the compare page. */
export const CHANGED_ATTEMPTS_LISTED = 200;

/** An attempt as Compare pairs it: by attack, number and (for an adaptive attack's chain) round. */
export interface PairedAttempt {
  attack: string;
  attempt: number;
  round?: number | undefined;
  outcome: AttackOutcome;
}

/** The attempts of two runs paired by attack, number and round whose outcome differs (the first `limit`). */
export function changedAttemptsOf(
  left: readonly PairedAttempt[],
  right: readonly PairedAttempt[],
  limit: number = CHANGED_ATTEMPTS_LISTED,
): ChangedAttempts {
  const key = (attempt: PairedAttempt) =>
    `${attempt.attack}\u0000${attempt.attempt}\u0000${attempt.round ?? 0}`;
  const rightByKey = new Map(right.map((attempt) => [key(attempt), attempt.outcome]));
  const changed: ChangedAttempt[] = [];
  let paired = 0;
  let total = 0;
  for (const attempt of left) {
    const other = rightByKey.get(key(attempt));
    if (other === undefined) continue;
    paired++;
    if (other === attempt.outcome) continue;
    total++;
    if (changed.length < limit) {
      changed.push({
        attack: attempt.attack,
        attempt: attempt.attempt,
        round: attempt.round,
        left: attempt.outcome,
        right: other,
      });
    }
  }
  return { changed, total, paired };
}
