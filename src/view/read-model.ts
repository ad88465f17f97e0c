import { NotFoundError } from '../errors.js';
import type { MemoryReader } from '../memory/memory-reader.js';
import type { AttemptRecord } from '../models/attempt-record.js';
import type { CampaignRun } from '../models/campaign-run.js';
import type { GapReason } from '../models/vocabulary.js';
import { countAttempts, gapCodesOf, type RunSummary, summarizeRun } from '../render/run-summary.js';

/**
 * Everything `witness view` reads from the memory, and nothing else does: the pages render only the view
 * records built here. Reads go through a {@link MemoryReader}, so the viewer can never create, migrate or
 * write a database.
 *
 * Runs and their attempts come from the memory's own records (`listRuns`, `getRun`, `listAttempts`: the
 * run stored when it started, its attack results joined with their scores and observations), the same
 * reads `witness report` makes. Containment, change sets and controls are shown when a record carries them.
 */

export interface AttemptView {
  record: AttemptRecord;
  /** A benign control attack (`control: true`): left out of the success rate, listed apart. */
  control: boolean;
  /** The judged surface of the attack's condition: `workspace` unless the condition says `home`. */
  surface: string;
  /** Distinct gap codes of the attempt's evidence, sorted. */
  gapCodes: GapReason[];
}

export interface RunView {
  run: CampaignRun;
  /** The run's counts, totals, controls and gaps (what the report shows too). */
  summary: RunSummary;
  attempts: AttemptView[];
}

export class ViewReadModel {
  readonly #reader: MemoryReader;

  constructor(reader: MemoryReader) {
    this.#reader = reader;
  }

  get location(): string {
    return `${this.#reader.location.backend} ${this.#reader.location.target}`;
  }

  /** Every stored run, newest first (a run is listed from its start, before any attempt is stored). */
  async listRuns(): Promise<RunView[]> {
    const runs = await this.#reader.read(async (memory) => {
      const all = await memory.listRuns();
      const views: RunView[] = [];
      for (const run of all) views.push(buildRunView(run, await memory.listAttempts(run.runId)));
      return views;
    });
    return runs.sort(newestFirst);
  }

  async getRun(runId: string): Promise<RunView | undefined> {
    return this.#reader.read(async (memory) => {
      let run: CampaignRun;
      try {
        run = await memory.getRun(runId);
      } catch (error) {
        if (error instanceof NotFoundError) return undefined;
        throw error;
      }
      return buildRunView(run, await memory.listAttempts(runId));
    });
  }

  /**
   * A short token that changes whenever a run or an attempt is stored (in one run, or anywhere when `runId`
   * is undefined). Pages poll it to update while a campaign runs.
   */
  async changeToken(runId?: string): Promise<string> {
    return this.#reader.read(async (memory) => {
      const runs = runId === undefined ? (await memory.listRuns()).length : 1;
      const results = await memory.listAttackResults();
      const mine = runId === undefined ? results : results.filter((result) => result.runId === runId);
      return `${runs}-${mine.length}-${mine.at(-1)?.id ?? 'none'}`;
    });
  }
}

/** The view of one run from its stored attempts (pure; exported for tests and other readers). */
export function buildRunView(run: CampaignRun, records: readonly AttemptRecord[]): RunView {
  const controlAttacks = new Set(
    run.attacks.filter((attack) => attack.control === true).map((attack) => attack.id),
  );
  return {
    run,
    summary: summarizeRun(run, countAttempts(records)),
    attempts: records.map((record) => attemptView(record, controlAttacks.has(record.attack))),
  };
}

function attemptView(record: AttemptRecord, controlAttack: boolean): AttemptView {
  const condition = record.expectation.conditions[0] as { surface?: string } | undefined;
  return {
    record,
    control: controlAttack || record.control === true,
    surface: condition?.surface ?? 'workspace',
    gapCodes: gapCodesOf(record) as GapReason[],
  };
}

function newestFirst(a: RunView, b: RunView): number {
  return a.run.startedAt < b.run.startedAt ? 1 : a.run.startedAt > b.run.startedAt ? -1 : 0;
}
