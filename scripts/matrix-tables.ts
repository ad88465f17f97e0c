/**
 * Markdown tables of attack-library results for docs/attacks.md, shared by the scripts that run the
 * matrix (attack-matrix-mock.ts) and that read stored runs (attack-matrix-results.ts). Pure: the same
 * results give the same text. Groups come from `groupByLibrary`, the grouping the report and the viewer use.
 */
import {
  CARRIER_IDS,
  groupByLibrary,
  type LibraryAxis,
  type LibraryGroup,
  libraryRefOf,
  OBJECTIVE_IDS,
  STRATEGY_IDS,
} from '../src/attacks/library/index.js';
import type { AttemptOutcome, OutcomeTotals } from '../src/attacks/outcome.js';

export interface ModeResults {
  /** A column label, e.g. `vulnerable`. */
  mode: string;
  attempts: ReadonlyArray<{ attack: string; outcome: AttemptOutcome }>;
}

/** `success/decided`, with the undetermined and errors named when there are any. */
export function cell(totals: OutcomeTotals | undefined): string {
  if (totals === undefined) return '–';
  const decided = totals.success + totals.failure;
  const extra = [
    totals.undetermined > 0 ? `${totals.undetermined} undetermined` : '',
    totals.error > 0 ? `${totals.error} error` : '',
  ].filter((part) => part !== '');
  return `${totals.success}/${decided}${extra.length > 0 ? ` (${extra.join(', ')})` : ''}`;
}

/** One table per axis (strategy, carrier, objective), a column per mode, rows in library order. */
export function axisTables(results: readonly ModeResults[]): string {
  const grouped = results.map((result) => groupByLibrary(result.attempts));
  const table = (axis: LibraryAxis, ids: readonly string[]) => {
    const find = (groups: LibraryGroup[], id: string) =>
      groups.find((group) => group.axis === axis && group.id === id)?.totals;
    const present = ids.filter((id) => grouped.some((groups) => find(groups, id) !== undefined));
    const rows = [
      `| ${axis} | ${results.map((result) => `${result.mode}: success/decided`).join(' | ')} |`,
      `|---|${results.map(() => '---').join('|')}|`,
    ];
    for (const id of present) {
      rows.push(`| \`${id}\` | ${grouped.map((groups) => cell(find(groups, id))).join(' | ')} |`);
    }
    return rows.join('\n');
  };
  return [
    '**By strategy**',
    '',
    table('strategy', STRATEGY_IDS),
    '',
    '**By carrier**',
    '',
    table('carrier', CARRIER_IDS),
    '',
    '**By objective**',
    '',
    table('objective', OBJECTIVE_IDS),
  ].join('\n');
}

/** Carrier rows × strategy columns; each cell is `successes/attempts` of one mode's results. */
export function carrierStrategyGrid(result: ModeResults): string {
  const grid = [`| carrier \\ strategy | ${STRATEGY_IDS.map((id) => `\`${id}\``).join(' | ')} |`];
  grid.push(`|---|${STRATEGY_IDS.map(() => '---').join('|')}|`);
  for (const carrier of CARRIER_IDS) {
    const counts = STRATEGY_IDS.map((strategy) => {
      const mine = result.attempts.filter((attempt) => {
        const ref = libraryRefOf(attempt.attack);
        return ref?.carrier === carrier && ref.strategy === strategy;
      });
      return `${mine.filter((attempt) => attempt.outcome === 'success').length}/${mine.length}`;
    });
    grid.push(`| \`${carrier}\` | ${counts.join(' | ')} |`);
  }
  return grid.join('\n');
}
