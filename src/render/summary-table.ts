import type { AttemptRecord } from '../attacks/attempt-record.js';
import {
  type AttemptOutcome,
  attemptLabel,
  formatControls,
  formatSuccessRate,
  formatUtility,
  type OutcomeTotals,
  taskLabel,
} from '../attacks/outcome.js';
import { countChanges } from '../models/change-set.js';
import { countRequests, type NetworkEvidence } from '../models/network-evidence.js';
import type { TaskOutcome } from '../models/vocabulary.js';
import { neutralizeText } from '../text/quote-text.js';
import { containmentWord, verdictText } from './attempt-words.js';

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

/**
 * One attempt's row as text, computed from its record: what the table keeps of an attempt, so a caller with
 * thousands of records (`witness run` reading its spool) can drop each record once its line is made.
 */
export interface TableLine {
  label: string | undefined;
  cells: {
    attack: string;
    attempt: string;
    claim: string;
    verdict: string;
    changes: string;
    containment: string;
    /** The user's task: `DONE`, `not done`, `undetermined`; `-` when the attack names none. */
    task: string;
    /**
     * Requests the attempt sent (SPEC §14): `3`, `3 (1 refused)`; `?` when its network was not observed
     * (`network: host`), `-` without network evidence or under `network: none`.
     */
    requests: string;
    outcome: string;
  };
  /** The agent ran as a process (a `sandbox` column is shown when any line says so). */
  contained: boolean;
  /** The attempt's error in full (neutralized, bounded), printed below the table; null without one. */
  error: string | null;
  /** The adaptive attack's chain this attempt is a round of (SPEC §15): its rows open under one chain row. */
  chain?: { id: string; round: number; outcome: AttemptOutcome } | undefined;
}

export function tableLineOf({ label, record }: TableRow): TableLine {
  return {
    label,
    cells: {
      attack: neutralizeText(record.attack, { maxChars: 60 }),
      attempt: String(record.attempt),
      claim: claim(record),
      verdict: verdictText(record.score),
      changes: changeCounts(record),
      containment: containmentWord(record.containment),
      task: record.task === undefined ? '-' : taskCell(record.task.outcome),
      requests: requestsCell(record.network),
      outcome: attemptLabel(record).toUpperCase(),
    },
    contained: record.containment !== undefined && record.containment !== 'in_process',
    // The table cuts an error to a few words; its cause (ECONNREFUSED host:port, the agent's stderr tail)
    // is usually at the end, so each error is also printed in full (neutralized, bounded) below. So is the
    // failure of a target whose attempt is a success all the same (the outcome follows the evidence).
    error: noteOf(label, record),
    ...(record.chain === undefined
      ? {}
      : { chain: { id: record.chain, round: record.round ?? 1, outcome: record.outcome } }),
  };
}

/**
 * The notes printed below the table: the attempt's error, or, for an attempt that is not `error`, how its
 * target failed after the verdict was earned; and why the run does not hold its record in full. Line
 * breaks in a message become indented lines.
 */
function noteOf(label: string | undefined, record: AttemptRecord): string | null {
  const who = `${label === undefined ? '' : `${neutralizeText(label, { maxChars: 40 })} `}${neutralizeText(record.attack, { maxChars: 60 })} #${record.attempt}`;
  const notes: string[] = [];
  if (record.error !== null) notes.push(`error in ${who}: ${block(record.error)}`);
  else if (record.targetError !== undefined) {
    notes.push(
      `${attemptLabel(record).toUpperCase()} of ${who} stands though its agent failed (${record.targetError.kind}): ${block(record.targetError.message)}`,
    );
  }
  if (record.storeError !== undefined && record.storeError !== record.error) {
    notes.push(`${who} is not stored in full: ${block(record.storeError)}`);
  }
  return notes.length === 0 ? null : notes.join('\n');
}

/** A message for the notes: neutralized and bounded, its line breaks kept as indented lines. */
function block(message: string): string {
  return neutralizeText(message, { maxChars: ERROR_CHARS, multiline: true }).replace(/\n/g, '\n  ');
}

export function renderAttemptTable(rows: readonly TableRow[]): string {
  return renderTableLines(rows.map(tableLineOf));
}

/** The table of {@link tableLineOf}'s lines: the same text {@link renderAttemptTable} gives for their records. */
export function renderTableLines(lines: readonly TableLine[]): string {
  const withLabel = lines.some((line) => line.label !== undefined);
  // Shown when an agent ran as a process: `bwrap`, or `NONE` when the campaign chose no sandbox.
  const withContainment = lines.some((line) => line.contained);
  // Shown when any attack names the user's task (SPEC §16).
  const withTask = lines.some((line) => line.cells.task !== '-');
  // Shown when any attempt's requests were observed (network: proxy) or went unobserved (network: host).
  const withRequests = lines.some((line) => line.cells.requests !== '-');
  const header = [
    ...(withLabel ? ['target'] : []),
    'attack',
    '#',
    'reply (the claim)',
    'file-system verdict',
    'changes +/~/-/m',
    ...(withContainment ? ['sandbox'] : []),
    ...(withRequests ? ['requests'] : []),
    ...(withTask ? ['user task'] : []),
    'outcome',
  ];
  const row = ({ label, cells }: Pick<TableLine, 'label' | 'cells'>) => [
    ...(withLabel ? [label ?? ''] : []),
    cells.attack,
    cells.attempt,
    cells.claim,
    cells.verdict,
    cells.changes,
    ...(withContainment ? [cells.containment] : []),
    ...(withRequests ? [cells.requests] : []),
    ...(withTask ? [cells.task] : []),
    cells.outcome,
  ];
  const body = withChainRows(lines).map(row);
  const widths = header.map((title, i) =>
    Math.max(title.length, ...body.map((row) => (row[i] as string).length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] as number)))
      .join('  ')
      .trimEnd();
  const errors = lines.flatMap((entry) => (entry.error === null ? [] : [entry.error]));
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...body.map(line), ...errors].join('\n');
}

/**
 * The lines with each adaptive attack's chain as one row, its outcome the chain's (a success if any round
 * succeeded, else its last round's), followed by its rounds, indented, each with its own outcome in lower
 * case (SPEC §15: the success rate counts chains).
 */
function withChainRows(lines: readonly TableLine[]): Array<Pick<TableLine, 'label' | 'cells'>> {
  const rounds = new Map<string, TableLine[]>();
  for (const line of lines) {
    if (line.chain === undefined) continue;
    rounds.set(line.chain.id, [...(rounds.get(line.chain.id) ?? []), line]);
  }
  const out: Array<Pick<TableLine, 'label' | 'cells'>> = [];
  const opened = new Set<string>();
  for (const line of lines) {
    if (line.chain === undefined) {
      out.push(line);
      continue;
    }
    if (!opened.has(line.chain.id)) {
      opened.add(line.chain.id);
      const mine = rounds.get(line.chain.id) ?? [];
      const outcome = mine.some((round) => round.chain?.outcome === 'success')
        ? 'SUCCESS'
        : (mine.at(-1)?.cells.outcome ?? line.cells.outcome);
      out.push({
        label: line.label,
        cells: {
          ...line.cells,
          claim: `(adaptive: ${mine.length} round${mine.length === 1 ? '' : 's'})`,
          verdict: '',
          changes: '',
          containment: '',
          requests: '',
          task: '',
          outcome,
        },
      });
    }
    out.push({
      label: line.label,
      cells: {
        ...line.cells,
        attack: `  round ${line.chain.round}`,
        outcome: line.cells.outcome.toLowerCase(),
      },
    });
  }
  return out;
}

export function renderTotals(name: string, totals: OutcomeTotals): string {
  const attempts = `${totals.attempts} attempt${totals.attempts === 1 ? '' : 's'}`;
  const line = `${neutralizeText(name, { maxChars: 120 })}: ${attempts} — ${totals.success} success, ${totals.failure} failure, ${totals.undetermined} undetermined, ${totals.error} error; attack success rate ${formatSuccessRate(totals)}`;
  const utility = formatUtility(totals);
  const controls = formatControls(totals.controls);
  return [
    line,
    ...(utility === '' ? [] : [`utility (user task done): ${utility}`]),
    ...(controls === '' ? [] : [controls]),
  ].join('\n');
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

function requestsCell(network: NetworkEvidence | undefined): string {
  if (network === undefined || network.mode === 'none') return '-';
  if (network.mode === 'host') return '?';
  const { sent, refused } = countRequests(network);
  return refused === 0 ? String(sent) : `${sent} (${refused} refused)`;
}

function claim(record: AttemptRecord): string {
  if (record.reply === null)
    return record.error === null ? '(no reply)' : `(no reply: ${shorten(record.error, 40)})`;
  return `"${shorten(record.reply, CLAIM_CHARS)}"`;
}

/** Done in capitals, like a proven verdict; the rest as they read. */
function taskCell(outcome: TaskOutcome): string {
  const label = taskLabel(outcome);
  return label === 'done' ? 'DONE' : label;
}

/** One line (runs of whitespace folded to a space), every other control escaped, cut to `max` code points. */
function shorten(text: string, max: number): string {
  return neutralizeText(text.replace(/[ \t\n\r]+/g, ' ').trim(), { maxChars: max - 1 });
}
