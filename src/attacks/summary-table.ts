import { countChanges } from '../models/change-set.js';
import { neutralizeText } from '../text/quote-text.js';
import type { AttemptRecord } from './attempt-record.js';
import { attemptLabel, formatControls, formatSuccessRate, type OutcomeTotals } from './outcome.js';

/**
 * The plain-text table `witness run` and `witness demo` print: one row per attempt, the agent's claim
 * (its reply, cut short and flattened to one line) next to the file-system verdict and the outcome.
 */

export interface TableRow {
  label?: string | undefined;
  record: AttemptRecord;
}

const CLAIM_CHARS = 60;
const ERROR_CHARS = 1_000;

export function renderAttemptTable(rows: readonly TableRow[]): string {
  const withLabel = rows.some((row) => row.label !== undefined);
  // Shown when an agent ran as a process: `bwrap`, or `NONE` when the campaign chose no sandbox.
  const withContainment = rows.some(
    ({ record }) => record.containment !== undefined && record.containment !== 'in_process',
  );
  const header = [
    ...(withLabel ? ['target'] : []),
    'attack',
    '#',
    'reply (the claim)',
    'file-system verdict',
    'changes +/~/-/m',
    ...(withContainment ? ['sandbox'] : []),
    'outcome',
  ];
  const body = rows.map(({ label, record }) => [
    ...(withLabel ? [label ?? ''] : []),
    neutralizeText(record.attack, { maxChars: 60 }),
    String(record.attempt),
    claim(record),
    verdict(record),
    changeCounts(record),
    ...(withContainment ? [containment(record)] : []),
    attemptLabel(record).toUpperCase(),
  ]);
  const widths = header.map((title, i) =>
    Math.max(title.length, ...body.map((row) => (row[i] as string).length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] as number)))
      .join('  ')
      .trimEnd();
  // The table cuts an error to a few words; its cause (ECONNREFUSED host:port, the agent's stderr tail)
  // is usually at the end, so each error is also printed in full (neutralized, bounded) below.
  const errors = rows.flatMap(({ label, record }) =>
    record.error === null
      ? []
      : [
          `error in ${label === undefined ? '' : `${neutralizeText(label, { maxChars: 40 })} `}${neutralizeText(record.attack, { maxChars: 60 })} #${record.attempt}: ${neutralizeText(record.error, { maxChars: ERROR_CHARS })}`,
        ],
  );
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...body.map(line), ...errors].join('\n');
}

export function renderTotals(name: string, totals: OutcomeTotals): string {
  const attempts = `${totals.attempts} attempt${totals.attempts === 1 ? '' : 's'}`;
  const line = `${neutralizeText(name, { maxChars: 120 })}: ${attempts} — ${totals.success} success, ${totals.failure} failure, ${totals.undetermined} undetermined, ${totals.error} error; attack success rate ${formatSuccessRate(totals)}`;
  const controls = formatControls(totals.controls);
  return controls === '' ? line : `${line}\n${controls}`;
}

/**
 * Created/modified/deleted/mode-changed counts of the attempt's change sets (all surfaces); `?` marks an
 * incomplete change set (the counts are a lower bound), `-` an attempt without change evidence.
 */
function changeCounts(record: AttemptRecord): string {
  const changes = record.changes ?? [];
  const sets = changes.flatMap((entry) => (entry.changeSet === null ? [] : [entry.changeSet]));
  if (sets.length === 0) return '-';
  const sum = { created: 0, modified: 0, deleted: 0, mode_changed: 0 };
  for (const set of sets) {
    const counts = countChanges(set);
    for (const kind of Object.keys(sum) as Array<keyof typeof sum>) sum[kind] += counts[kind];
  }
  const incomplete =
    sets.some((set) => !set.coverage.complete) || changes.some((entry) => entry.changeSet === null);
  return `${sum.created}/${sum.modified}/${sum.deleted}/${sum.mode_changed}${incomplete ? '?' : ''}`;
}

function claim(record: AttemptRecord): string {
  if (record.reply === null)
    return record.error === null ? '(no reply)' : `(no reply: ${shorten(record.error, 40)})`;
  return `"${shorten(record.reply, CLAIM_CHARS)}"`;
}

function containment(record: AttemptRecord): string {
  if (record.containment === 'none') return 'NONE';
  if (record.containment === 'in_process') return 'in-process';
  return record.containment ?? '';
}

function verdict(record: AttemptRecord): string {
  const score = record.score;
  if (score === null) return 'not judged';
  const condition = score.scoredExpectation.conditions[0];
  const where = condition === undefined ? '' : ` ${neutralizeText(condition.uri, { maxChars: 80 })}`;
  if (score.status === 'undetermined') return `undetermined${where}`;
  const [yes, no] = VERDICT_WORDS[condition?.conditionType ?? 'content_written'];
  return `${score.value ? yes : no}${where}`;
}

const VERDICT_WORDS = {
  content_written: ['WRITTEN', 'not written'],
  file_created: ['CREATED', 'not created'],
  file_deleted: ['DELETED', 'not deleted'],
  file_modified: ['MODIFIED', 'not modified'],
} as const;

/** One line (runs of whitespace folded to a space), every other control escaped, cut to `max` code points. */
function shorten(text: string, max: number): string {
  return neutralizeText(text.replace(/[ \t\n\r]+/g, ' ').trim(), { maxChars: max - 1 });
}
