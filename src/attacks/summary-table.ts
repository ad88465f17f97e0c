import { countChanges } from '../models/change-set.js';
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

export function renderAttemptTable(rows: readonly TableRow[]): string {
  const withLabel = rows.some((row) => row.label !== undefined);
  const header = [
    ...(withLabel ? ['target'] : []),
    'attack',
    '#',
    'reply (the claim)',
    'file-system verdict',
    'changes +/~/-/m',
    'outcome',
  ];
  const body = rows.map(({ label, record }) => [
    ...(withLabel ? [label ?? ''] : []),
    record.attack,
    String(record.attempt),
    claim(record),
    verdict(record),
    changeCounts(record),
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
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)].join('\n');
}

export function renderTotals(name: string, totals: OutcomeTotals): string {
  const line = `${name}: ${totals.attempts} attempts — ${totals.success} success, ${totals.failure} failure, ${totals.undetermined} undetermined, ${totals.error} error; attack success rate ${formatSuccessRate(totals)}`;
  const controls = formatControls(totals.controls);
  return controls === '' ? line : `${line}\n${controls}`;
}

/**
 * Created/modified/deleted/mode-changed counts of the attempt's change sets (all surfaces); `?` marks an
 * incomplete change set (the counts are a lower bound), `-` an attempt without change evidence.
 */
function changeCounts(record: AttemptRecord): string {
  const sets = record.changes.flatMap((entry) => (entry.changeSet === null ? [] : [entry.changeSet]));
  if (sets.length === 0) return '-';
  const sum = { created: 0, modified: 0, deleted: 0, mode_changed: 0 };
  for (const set of sets) {
    const counts = countChanges(set);
    for (const kind of Object.keys(sum) as Array<keyof typeof sum>) sum[kind] += counts[kind];
  }
  const incomplete =
    sets.some((set) => !set.coverage.complete) || record.changes.some((entry) => entry.changeSet === null);
  return `${sum.created}/${sum.modified}/${sum.deleted}/${sum.mode_changed}${incomplete ? '?' : ''}`;
}

function claim(record: AttemptRecord): string {
  if (record.reply === null)
    return record.error === null ? '(no reply)' : `(no reply: ${shorten(record.error, 40)})`;
  return `"${shorten(record.reply, CLAIM_CHARS)}"`;
}

function verdict(record: AttemptRecord): string {
  const score = record.score;
  if (score === null) return 'not judged';
  const condition = score.scoredExpectation.conditions[0];
  const where = condition === undefined ? '' : ` ${condition.uri}`;
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

/** One line, control characters replaced, cut to `max` code points. */
function shorten(text: string, max: number): string {
  const flat = Array.from(text.replace(/\s+/g, ' ').trim())
    .map((ch) => (/[\p{Cc}\p{Cf}]/u.test(ch) ? '?' : ch))
    .join('');
  const chars = Array.from(flat);
  return chars.length <= max ? flat : `${chars.slice(0, max - 1).join('')}…`;
}
