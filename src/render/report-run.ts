import { type AttemptOutcome, attemptLabel } from '../attacks/outcome.js';
import type { AttemptRecord } from '../models/attempt-record.js';
import type { CampaignRun } from '../models/campaign-run.js';
import type { TaskOutcome } from '../models/vocabulary.js';
import { verdictText } from './attempt-words.js';
import { AttemptCounter, type RunSummary, summarizeRun } from './run-summary.js';

/**
 * What the report shows of one run, chosen so that its size grows with what a person must read, not with
 * the run: the summary (counts), full cards for the attempts that need reading — successes, undetermined,
 * errors and tripped controls, at most `cardsPerOutcome` of each kind, the first in run order — and the
 * other attempts (decided false) one line each, at most `compact` of them. Whatever a bound leaves out is
 * counted, so the report says how many more there are.
 *
 * {@link ReportCollector} chooses from records as they come (a run that just finished, or stored attempts
 * read one by one), keeping only what it will show.
 */

export interface ReportBounds {
  /** Full cards per kind of attempt that needs reading. */
  cardsPerOutcome: number;
  /** One-line rows of attempts decided false. */
  compact: number;
}

export const DEFAULT_REPORT_BOUNDS: ReportBounds = { cardsPerOutcome: 50, compact: 500 };

/** The kinds of attempt shown in full, in the order the report names them. */
export const CARD_KINDS = ['success', 'control_tripped', 'undetermined', 'error'] as const;
export type CardKind = (typeof CARD_KINDS)[number];

/** Each kind in words, and the viewer's filter that lists its attempts. */
export const CARD_KIND_TEXT: Readonly<Record<CardKind, { label: string; query: string }>> = {
  success: { label: 'successes', query: 'outcome=success' },
  control_tripped: { label: 'tripped controls', query: 'outcome=success' },
  undetermined: { label: 'undetermined attempts', query: 'outcome=undetermined' },
  error: { label: 'errors', query: 'outcome=error' },
};

/** An attempt decided false, as one line. */
export interface CompactAttempt {
  attack: string;
  attempt: number;
  /** The round of an adaptive attack's chain. */
  round?: number | undefined;
  outcome: AttemptOutcome;
  control: boolean;
  finishedAt: string;
  /** {@link verdictText} of its score. */
  verdict: string;
  /** The user task's outcome (SPEC §16), when the attempt names a task. */
  task?: { outcome: TaskOutcome } | undefined;
}

export interface ReportRun {
  summary: RunSummary;
  /** The attempts shown in full, in run order. */
  cards: AttemptRecord[];
  /**
   * For a carded round (after the first) of an adaptive attack's chain, the injection text of the round
   * before, keyed by {@link roundKey}: the card shows the diff.
   */
  injectionsBefore: ReadonlyMap<string, string>;
  /** Per kind, how many attempts that need reading got no card. */
  cardsOmitted: Array<{ kind: CardKind; label: string; count: number; query: string }>;
  compact: CompactAttempt[];
  /** Attempts decided false that are not listed. */
  compactOmitted: number;
  bounds: ReportBounds;
}

/** The kind of card an attempt gets, or null for one listed compactly. */
export function cardKindOf(attempt: {
  outcome: AttemptOutcome;
  control?: boolean | undefined;
}): CardKind | null {
  const label = attemptLabel(attempt);
  return label === 'failure' || label === 'control_clean' ? null : label;
}

export function compactAttemptOf(record: AttemptRecord, control: boolean): CompactAttempt {
  return {
    attack: record.attack,
    attempt: record.attempt,
    ...(record.round === undefined ? {} : { round: record.round }),
    outcome: record.outcome,
    control,
    finishedAt: record.finishedAt,
    verdict: verdictText(record.score),
    ...(record.task === undefined ? {} : { task: { outcome: record.task.outcome } }),
  };
}

/**
 * Chooses a {@link ReportRun} from a run's records given one at a time with their position in the run
 * (attempts may finish out of order); holds at most the bounded cards and rows, never every record.
 */
export class ReportCollector {
  readonly #run: CampaignRun;
  readonly #bounds: ReportBounds;
  readonly #controls: ReadonlySet<string>;
  readonly #counter = new AttemptCounter();
  readonly #cards = new Map<CardKind, Array<{ index: number; record: AttemptRecord }>>();
  readonly #seen = new Map<CardKind, number>();
  #compact: Array<{ index: number; row: CompactAttempt }> = [];
  #compactSeen = 0;
  #next = 0;
  /** The latest injection text of each adaptive chain (its rounds run one after another). */
  readonly #lastInjection = new Map<string, string>();
  readonly #injectionsBefore = new Map<string, string>();

  constructor(run: CampaignRun, bounds: ReportBounds = DEFAULT_REPORT_BOUNDS) {
    this.#run = run;
    this.#bounds = bounds;
    this.#controls = new Set(
      run.attacks.filter((attack) => attack.control === true).map((attack) => attack.id),
    );
  }

  /** Adds one record; `index` is its position in the run (default: after the previous one). */
  add(record: AttemptRecord, index: number = this.#next): void {
    this.#next = Math.max(this.#next, index + 1);
    this.#counter.add(record);
    const before = record.chain === undefined ? undefined : this.#lastInjection.get(record.chain);
    if (record.chain !== undefined && record.adaptation !== undefined) {
      this.#lastInjection.set(record.chain, record.adaptation.injection);
    }
    const control = record.control === true || this.#controls.has(record.attack);
    const kind = cardKindOf({ outcome: record.outcome, control });
    if (kind === null) {
      this.#compactSeen++;
      keepFirst(this.#compact, { index, row: compactAttemptOf(record, control) }, this.#bounds.compact);
      return;
    }
    this.#seen.set(kind, (this.#seen.get(kind) ?? 0) + 1);
    const kept = this.#cards.get(kind) ?? [];
    this.#cards.set(kind, kept);
    keepFirst(kept, { index, record }, this.#bounds.cardsPerOutcome);
    if (before !== undefined) this.#injectionsBefore.set(roundKey(record), before);
  }

  result(): ReportRun {
    const cards = [...this.#cards.values()].flat().sort((a, b) => a.index - b.index);
    return {
      summary: summarizeRun(this.#run, this.#counter.counts()),
      cards: cards.map((entry) => entry.record),
      injectionsBefore: new Map(
        cards.flatMap((entry) => {
          const before = this.#injectionsBefore.get(roundKey(entry.record));
          return before === undefined ? [] : [[roundKey(entry.record), before] as const];
        }),
      ),
      cardsOmitted: CARD_KINDS.map((kind) => ({
        kind,
        ...CARD_KIND_TEXT[kind],
        count: (this.#seen.get(kind) ?? 0) - (this.#cards.get(kind)?.length ?? 0),
      })),
      compact: this.#compact.map((entry) => entry.row),
      compactOmitted: this.#compactSeen - this.#compact.length,
      bounds: this.#bounds,
    };
  }
}

/** Names a round of an adaptive attack's chain (empty for an attempt that is none). */
export function roundKey(record: Pick<AttemptRecord, 'chain' | 'round'>): string {
  return record.chain === undefined ? '' : `${record.chain}\u0000${record.round ?? 1}`;
}

/** The report of records in hand, in run order. */
export function reportRunOf(
  run: CampaignRun,
  records: Iterable<AttemptRecord>,
  bounds: ReportBounds = DEFAULT_REPORT_BOUNDS,
): ReportRun {
  const collector = new ReportCollector(run, bounds);
  for (const record of records) collector.add(record);
  return collector.result();
}

/** Inserts `entry` in index order, keeping at most `bound` entries (those of the smallest indexes). */
function keepFirst<T extends { index: number }>(list: T[], entry: T, bound: number): void {
  if (bound <= 0) return;
  if (list.length >= bound && (list[list.length - 1] as T).index < entry.index) return;
  let low = 0;
  let high = list.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if ((list[middle] as T).index < entry.index) low = middle + 1;
    else high = middle;
  }
  list.splice(low, 0, entry);
  if (list.length > bound) list.pop();
}
