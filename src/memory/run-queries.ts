import type { AttemptRecord } from '../models/attempt-record.js';
import type { AttackOutcome, TaskOutcome } from '../models/vocabulary.js';

/**
 * What the viewer and the report ask of stored runs, answered by the database from indexed columns (the
 * attempt facts, attempt-facts.ts) — counts per attack, outcome, task outcome and chain, a page of
 * attempts, one attempt, two runs paired — so the cost of a page or a report grows with what it shows,
 * never with the run. A run of a hundred thousand attempts is read a page at a time.
 *
 * ```ts
 * const counts = await memory.runQueries.runCounts([runId]);
 * const page = await memory.runQueries.pageAttempts(runId, { order: 'outcome', descending: false, limit: 100 });
 * const more = await memory.runQueries.pageAttempts(runId, { order: 'outcome', descending: false, limit: 100, after: page.next ?? undefined });
 * ```
 */

/** Attempts of one attack that ended with one outcome (and, when the attack names one, one user-task outcome). */
export interface AttackOutcomeCount {
  attack: string;
  outcome: AttackOutcome;
  /** The user task's outcome (SPEC §16); null when the attempt names no task. */
  task: TaskOutcome | null;
  /**
   * Whether these attempts stand for their attack (SPEC §15: the success rate counts chains): true for an
   * attempt that is no round of an adaptive attack's chain and for each chain's deciding round (its first
   * success, else its last round); false for the chain's other rounds, which count only for utility.
   */
  deciding: boolean;
  count: number;
}

/** A run's counts: what its summary is built from (src/render/run-summary.ts), never its attempts. */
export interface RunCounts {
  perAttackOutcome: AttackOutcomeCount[];
  /** Per gap code of the attempts' evidence, how many attempts have it (an attempt counts once per code). */
  gaps: Array<{ reason: string; attempts: number }>;
  /** Distinct containment values recorded by the run's attempts, sorted. */
  containment: string[];
  /** When the last stored attempt finished; null before the first. */
  lastFinishedAt: string | null;
}

/** The counts of a run with no attempt stored yet. */
export function emptyRunCounts(): RunCounts {
  return { perAttackOutcome: [], gaps: [], containment: [], lastFinishedAt: null };
}

/**
 * The orders a page of attempts can be read in, each backed by an index; ties are broken by the run's
 * order. `run`: the run's attack order, then attempt number and round; `attack`: by attack id.
 */
export const ATTEMPT_ORDERS = ['run', 'attack', 'outcome', 'attempt', 'surface', 'gaps', 'finished'] as const;
export type AttemptOrder = (typeof ATTEMPT_ORDERS)[number];

/** Which attempts of a run; every field narrows, none set means all. */
export interface AttemptFilter {
  /** Only attempts of these attacks. */
  attacks?: readonly string[] | undefined;
  outcome?: AttackOutcome | undefined;
  /** Only attempts of control attacks (true) or of the others (false). */
  control?: boolean | undefined;
  /** Only attempts judged on this surface (`workspace`, `home`, `network`). */
  surface?: string | undefined;
  /** Only attempts whose evidence has this gap code; `none`: only those without gaps. */
  gap?: string | undefined;
  /** Only attempts whose reply holds this text (ASCII letters compared without case). */
  replyText?: string | undefined;
}

export interface AttemptPageRequest extends AttemptFilter {
  order: AttemptOrder;
  descending: boolean;
  /** At most this many rows (1 to 1,000). */
  limit: number;
  /** The `next` of the previous page: the rows after it. */
  after?: string | undefined;
}

/** An attempt's key in its run: attack, number and (for a round of an adaptive chain) round. */
export interface AttemptKey {
  attack: string;
  attempt: number;
  /** Undefined: the attempt's first (or only) round. */
  round?: number | undefined;
}

/** One attempt as a table row: its facts and the first characters of its reply. */
export interface AttemptRow {
  attack: string;
  attempt: number;
  chain: string | null;
  /** The round in its chain; undefined for an attempt that is no round. */
  round: number | undefined;
  outcome: AttackOutcome;
  control: boolean;
  surface: string;
  taskOutcome: TaskOutcome | null;
  finishedAt: string;
  containment: string | null;
  gapCodes: string[];
  /** The reply's first {@link REPLY_EXCERPT_CHARS} characters; null when the agent gave none. */
  reply: string | null;
  /** Whether the attempt holds an error. */
  failed: boolean;
}

/** Characters of a reply a row carries (the claim column shows fewer). */
export const REPLY_EXCERPT_CHARS = 200;

export interface AttemptPage {
  rows: AttemptRow[];
  /** Where the next page starts (an opaque cursor); null after the last row. */
  next: string | null;
}

/** Two runs' attempts paired by attack, attempt and round. */
export interface PairedAttempts {
  /** The first pairs whose outcome differs, in the left run's order. */
  changed: Array<{
    attack: string;
    attempt: number;
    round: number | undefined;
    left: AttackOutcome;
    right: AttackOutcome;
  }>;
  /** How many pairs differ in all. */
  total: number;
  /** How many attempts are paired. */
  paired: number;
}

export interface RunQueries {
  /** Each run's counts (every run's when `runIds` is undefined); a run without attempts has empty counts. */
  runCounts(runIds?: readonly string[]): Promise<Map<string, RunCounts>>;
  /** How many of a run's attempts the filter keeps. */
  countAttempts(runId: string, filter: AttemptFilter): Promise<number>;
  /** One page of a run's attempts as rows; a cursor this memory did not give is an InvalidOptionError. */
  pageAttempts(runId: string, request: AttemptPageRequest): Promise<AttemptPage>;
  /** The first `limit` attempts the filter keeps, in the run's order, in full. */
  firstAttempts(runId: string, filter: AttemptFilter, limit: number): Promise<AttemptRecord[]>;
  /** One attempt in full; undefined when the run has no such attempt. */
  getAttempt(runId: string, key: AttemptKey): Promise<AttemptRecord | undefined>;
  /** The rounds of one adaptive chain, in order. */
  chainRounds(
    runId: string,
    chain: string,
  ): Promise<Array<{ attack: string; attempt: number; round: number; outcome: AttackOutcome }>>;
  /** The attempts before and after one in the run's order. */
  neighbours(runId: string, key: AttemptKey): Promise<{ previous?: AttemptKey; next?: AttemptKey }>;
  /** Two runs' attempts paired by attack, attempt and round: the first `limit` changes and the counts. */
  pairAttempts(left: string, right: string, limit: number): Promise<PairedAttempts>;
  /**
   * A short token that changes whenever a run or an attempt is stored (in one run, or anywhere when
   * `runId` is undefined).
   */
  changeToken(runId?: string): Promise<string>;
}
