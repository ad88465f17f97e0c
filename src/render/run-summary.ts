import {
  type AttemptOutcome,
  addControls,
  type ControlTotals,
  countTask,
  emptyControls,
  emptyUtility,
  type OutcomeTotals,
  outcomeTotalsOf,
  type UtilityTotals,
} from '../attacks/outcome.js';
import type { AttackOutcomeCount, RunCounts } from '../memory/run-queries.js';
import type { AttemptRecord } from '../models/attempt-record.js';
import type { CampaignRun } from '../models/campaign-run.js';
import type { TaskOutcome } from '../models/vocabulary.js';

/**
 * What a person first reads of a run — per attack the outcome counts and success rate, the totals with
 * controls apart, how many attempts hit each gap code — built from a few counts a database computes
 * ({@link RunCounts}: `Memory.runQueries`, src/memory/sql-run-queries.ts), never from the attempts themselves. The report and the
 * viewer render the same summary; {@link countAttempts} gives the same counts from records in hand (a run
 * that just finished), so both paths show the same numbers.
 */

export type { AttackOutcomeCount, RunCounts } from '../memory/run-queries.js';

export interface AttackSummary {
  id: string;
  control: boolean;
  /** Attempts the campaign planned for the attack. */
  planned: number;
  /** Attempts stored so far. */
  stored: number;
  /** The attack's attempts; for a control, its outcomes count as attempts here too. */
  totals: OutcomeTotals;
  attack: CampaignRun['attacks'][number] | undefined;
}

export interface RunSummary {
  run: CampaignRun;
  attacks: AttackSummary[];
  /** Attack attempts (controls left out of the rate, counted in `totals.controls`). */
  totals: OutcomeTotals;
  controls: ControlTotals;
  /** Attempts stored (an adaptive attack's chain counts once, like a planned attempt). */
  stored: number;
  /** Attempts stored, each round of a chain counted (the rows a run's attempt table lists). */
  storedRounds: number;
  planned: number;
  containment: string[];
  gaps: Array<{ reason: string; attempts: number }>;
  lastActivityAt: string;
  /** The counts the summary was built from (library tables and heatmaps regroup them). */
  counts: Array<AttackOutcomeCount & { control: boolean }>;
}

export function summarizeRun(run: CampaignRun, counts: RunCounts): RunSummary {
  const controlIds = new Set(
    run.attacks.filter((attack) => attack.control === true).map((attack) => attack.id),
  );
  const perAttack = new Map<string, { outcomes: Record<AttemptOutcome, number>; utility: UtilityTotals }>();
  const runTotals: Record<AttemptOutcome, number> = { success: 0, failure: 0, undetermined: 0, error: 0 };
  const controls = emptyControls();
  const utility = emptyUtility();
  let stored = 0;
  let storedRounds = 0;
  for (const { attack, outcome, task, deciding, count } of counts.perAttackOutcome) {
    storedRounds += count;
    let entry = perAttack.get(attack);
    if (entry === undefined) {
      entry = { outcomes: { success: 0, failure: 0, undetermined: 0, error: 0 }, utility: emptyUtility() };
      perAttack.set(attack, entry);
    }
    const control = controlIds.has(attack);
    if (task !== null) {
      countTask(entry.utility, task, count);
      countTask(utility, task, count);
      if (control) countTask(controls.utility, task, count);
    }
    if (!deciding) continue;
    entry.outcomes[outcome] += count;
    stored += count;
    if (control) addControls(controls, outcome, count);
    else runTotals[outcome] += count;
  }
  const known = new Set(run.attacks.map((attack) => attack.id));
  const others = [...perAttack.keys()].filter((id) => !known.has(id)).sort();
  const attacks = [...run.attacks.map((attack) => attack.id), ...others].map((id) => {
    const attack = run.attacks.find((entry) => entry.id === id);
    const entry = perAttack.get(id);
    // A control's row counts its outcomes like an attack's (it is marked as a control).
    const totals = outcomeTotalsOf(
      entry?.outcomes ?? { success: 0, failure: 0, undetermined: 0, error: 0 },
      emptyControls(),
      entry?.utility ?? emptyUtility(),
    );
    return {
      id,
      control: controlIds.has(id),
      planned: attack?.attempts ?? 0,
      stored: totals.attempts,
      totals,
      attack,
    };
  });
  const totals = outcomeTotalsOf(runTotals, controls, utility);
  return {
    run,
    attacks,
    totals,
    controls: totals.controls,
    stored,
    storedRounds,
    planned: run.attacks.reduce((sum, attack) => sum + attack.attempts, 0),
    containment: counts.containment,
    gaps: counts.gaps,
    lastActivityAt: counts.lastFinishedAt ?? run.startedAt,
    counts: counts.perAttackOutcome
      .filter((entry) => entry.deciding)
      .map((entry) => ({ ...entry, control: controlIds.has(entry.attack) })),
  };
}

/** The counts of {@link RunCounts} from records in hand (what the database computes for stored ones). */
export function countAttempts(records: Iterable<AttemptRecord>): RunCounts {
  const counter = new AttemptCounter();
  for (const record of records) counter.add(record);
  return counter.counts();
}

/**
 * {@link RunCounts} kept up to date one record at a time (records can then be dropped). The rounds of an
 * adaptive attack's chain are kept as a few fields each until the counts are asked for, when each chain's
 * deciding round is known.
 */
export class AttemptCounter {
  readonly #perAttackOutcome = new Map<string, AttackOutcomeCount>();
  readonly #chains = new Map<string, ChainRound[]>();
  readonly #gaps = new Map<string, number>();
  readonly #containment = new Set<string>();
  #lastFinishedAt: string | null = null;

  add(record: AttemptRecord): void {
    const task = record.task?.outcome ?? null;
    if (record.chain === undefined) {
      countInto(this.#perAttackOutcome, {
        attack: record.attack,
        outcome: record.outcome,
        task,
        deciding: true,
      });
    } else {
      const rounds = this.#chains.get(record.chain) ?? [];
      rounds.push({ attack: record.attack, outcome: record.outcome, task, round: record.round ?? 1 });
      this.#chains.set(record.chain, rounds);
    }
    for (const reason of gapCodesOf(record)) this.#gaps.set(reason, (this.#gaps.get(reason) ?? 0) + 1);
    if (record.containment !== undefined) this.#containment.add(record.containment);
    if (this.#lastFinishedAt === null || record.finishedAt > this.#lastFinishedAt) {
      this.#lastFinishedAt = record.finishedAt;
    }
  }

  counts(): RunCounts {
    const perAttackOutcome = new Map(
      [...this.#perAttackOutcome].map(([key, entry]) => [key, { ...entry }] as const),
    );
    for (const rounds of this.#chains.values()) {
      const ordered = [...rounds].sort((a, b) => a.round - b.round);
      const deciding = ordered.find((round) => round.outcome === 'success') ?? ordered.at(-1);
      for (const round of ordered) {
        countInto(perAttackOutcome, {
          attack: round.attack,
          outcome: round.outcome,
          task: round.task,
          deciding: round === deciding,
        });
      }
    }
    return {
      perAttackOutcome: [...perAttackOutcome.values()],
      gaps: [...this.#gaps].map(([reason, attempts]) => ({ reason, attempts })).sort(byReason),
      containment: [...this.#containment].sort(),
      lastFinishedAt: this.#lastFinishedAt,
    };
  }
}

interface ChainRound {
  attack: string;
  outcome: AttemptOutcome;
  task: TaskOutcome | null;
  round: number;
}

function countInto(counts: Map<string, AttackOutcomeCount>, entry: Omit<AttackOutcomeCount, 'count'>): void {
  const key = `${entry.attack}\u0000${entry.outcome}\u0000${entry.task ?? ''}\u0000${entry.deciding}`;
  const found = counts.get(key) ?? { ...entry, count: 0 };
  found.count++;
  counts.set(key, found);
}

/** Distinct gap codes of an attempt's evidence, sorted (what the gap filter and counts look at). */
export function gapCodesOf(record: Pick<AttemptRecord, 'observations'>): string[] {
  const codes = new Set<string>();
  for (const observation of record.observations) {
    for (const gap of observation.payload.coverage.gaps) codes.add(gap.reason);
  }
  return [...codes].sort();
}

function byReason(a: { reason: string }, b: { reason: string }): number {
  return a.reason < b.reason ? -1 : a.reason > b.reason ? 1 : 0;
}
