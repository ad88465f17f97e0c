import { type AttemptOutcome, type OutcomeTotals, outcomeTotalsOf } from '../outcome.js';
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

/**
 * What grouping needs of an attempt; `control: true` marks a benign control (left out). `count` (default 1)
 * stands for that many attempts of the attack with that outcome, as a database counts them.
 */
export interface GroupableAttempt {
  attack: string;
  outcome: AttemptOutcome;
  control?: boolean | undefined;
  count?: number | undefined;
}

type Counts = Record<AttemptOutcome, number>;

/**
 * Per axis, one group per id that occurs, in the library's order. Attempts of other attacks and
 * controls are left out; an empty list means no library attack was run.
 */
export function groupByLibrary(attempts: Iterable<GroupableAttempt>): LibraryGroup[] {
  const counts = countLibrary(attempts, (ref) => LIBRARY_AXES.map((axis) => `${axis}:${ref[axis]}`));
  return LIBRARY_AXES.flatMap((axis) =>
    VOCABULARY[axis].flatMap((id) => {
      const found = counts.get(`${axis}:${id}`);
      return found === undefined ? [] : [{ axis, id, totals: outcomeTotalsOf(found) }];
    }),
  );
}

/** One cell of a cross table: the attempts whose `rows` id and `columns` id are these. */
export interface LibraryCell {
  row: string;
  column: string;
  totals: OutcomeTotals;
}

/** A cross table of library attempts (objective × carrier, objective × strategy), for a heatmap. */
export interface LibraryCross {
  rows: LibraryAxis;
  columns: LibraryAxis;
  /** The ids that occur on each axis, in the library's order. */
  rowIds: string[];
  columnIds: string[];
  /** Only the cells that hold attempts. */
  cells: LibraryCell[];
}

/** Library attempts cross-tabulated by two axes (controls and other attacks left out, as above). */
export function crossByLibrary(
  attempts: Iterable<GroupableAttempt>,
  rows: LibraryAxis,
  columns: LibraryAxis,
): LibraryCross {
  const counts = countLibrary(attempts, (ref) => [`${ref[rows]}\u0000${ref[columns]}`]);
  const keys = [...counts.keys()].map((key) => key.split('\u0000') as [string, string]);
  const occurring = (axis: LibraryAxis, index: 0 | 1) =>
    VOCABULARY[axis].filter((id) => keys.some((key) => key[index] === id));
  const rowIds = occurring(rows, 0);
  const columnIds = occurring(columns, 1);
  const cells = rowIds.flatMap((row) =>
    columnIds.flatMap((column) => {
      const found = counts.get(`${row}\u0000${column}`);
      return found === undefined ? [] : [{ row, column, totals: outcomeTotalsOf(found) }];
    }),
  );
  return { rows, columns, rowIds, columnIds, cells };
}

const VOCABULARY: Record<LibraryAxis, readonly string[]> = {
  objective: OBJECTIVE_IDS,
  carrier: CARRIER_IDS,
  strategy: STRATEGY_IDS,
};

/** Outcome counts of library attempts under the keys `keysOf` gives each attempt's library entries. */
function countLibrary(
  attempts: Iterable<GroupableAttempt>,
  keysOf: (ref: LibraryRef) => string[],
): Map<string, Counts> {
  const counts = new Map<string, Counts>();
  for (const attempt of attempts) {
    if (attempt.control === true) continue;
    const ref = libraryRefOf(attempt.attack);
    if (ref === undefined) continue;
    for (const key of keysOf(ref)) {
      let entry = counts.get(key);
      if (entry === undefined) {
        entry = { success: 0, failure: 0, undetermined: 0, error: 0 };
        counts.set(key, entry);
      }
      entry[attempt.outcome] += attempt.count ?? 1;
    }
  }
  return counts;
}
