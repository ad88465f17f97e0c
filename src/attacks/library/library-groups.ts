import type { AttemptOutcome } from '../outcome.js';
import { type OutcomeTotals, tallyOutcomes } from '../outcome.js';
import {
  CARRIER_IDS,
  type CarrierId,
  type LibraryRef,
  OBJECTIVE_IDS,
  type ObjectiveId,
  STRATEGY_IDS,
  type StrategyId,
} from './library-ids.js';

/**
 * Results of library attacks grouped by objective, carrier and strategy, with the same totals (success
 * rate over decided attempts, and its range if the undetermined were decided) as the per-attack table.
 * An attempt is a library attempt when its attack id is `<objective>.<carrier>.<strategy>` with all
 * three in the library's vocabularies — the ids expansion gives, and what a stored run keeps.
 *
 * This is the one implementation of the grouping: the HTML report (src/render/report-html.ts) and the viewer's run
 * page (src/view/pages/run-page.ts) both render what it returns, so they cannot disagree on a number.
 * Control attempts are left out, as they are left out of every success rate.
 */

export const LIBRARY_AXES = ['objective', 'carrier', 'strategy'] as const;
export type LibraryAxis = (typeof LIBRARY_AXES)[number];

/** The library entries an attack id names, or undefined for any other id. */
export function libraryRefOf(attackId: string): LibraryRef | undefined {
  const parts = attackId.split('.');
  if (parts.length !== 3) return undefined;
  const [objective, carrier, strategy] = parts as [string, string, string];
  if (
    !(OBJECTIVE_IDS as readonly string[]).includes(objective) ||
    !(CARRIER_IDS as readonly string[]).includes(carrier) ||
    !(STRATEGY_IDS as readonly string[]).includes(strategy)
  ) {
    return undefined;
  }
  return {
    objective: objective as ObjectiveId,
    carrier: carrier as CarrierId,
    strategy: strategy as StrategyId,
  };
}

export interface LibraryGroup {
  axis: LibraryAxis;
  id: string;
  totals: OutcomeTotals;
}

/** What grouping needs of an attempt; `control: true` marks a benign control (left out). */
export interface GroupableAttempt {
  attack: string;
  outcome: AttemptOutcome;
  control?: boolean | undefined;
}

/**
 * Per axis, one group per id that occurs, in the library's order. Attempts of other attacks and
 * controls are left out; an empty list means no library attack was run.
 */
export function groupByLibrary(attempts: Iterable<GroupableAttempt>): LibraryGroup[] {
  const outcomes = new Map<string, AttemptOutcome[]>();
  for (const attempt of attempts) {
    if (attempt.control === true) continue;
    const ref = libraryRefOf(attempt.attack);
    if (ref === undefined) continue;
    for (const axis of LIBRARY_AXES) {
      const key = `${axis}:${ref[axis]}`;
      const list = outcomes.get(key) ?? [];
      list.push(attempt.outcome);
      outcomes.set(key, list);
    }
  }
  const vocabulary: Record<LibraryAxis, readonly string[]> = {
    objective: OBJECTIVE_IDS,
    carrier: CARRIER_IDS,
    strategy: STRATEGY_IDS,
  };
  return LIBRARY_AXES.flatMap((axis) =>
    vocabulary[axis].flatMap((id) => {
      const list = outcomes.get(`${axis}:${id}`);
      return list === undefined ? [] : [{ axis, id, totals: tallyOutcomes(list) }];
    }),
  );
}
