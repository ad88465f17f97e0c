import { NotFoundError } from '../errors.js';
import type { MemoryReader } from '../memory/memory-reader.js';
import {
  type AttemptKey,
  type AttemptRow,
  emptyRunCounts,
  type PairedAttempts,
} from '../memory/run-queries.js';
import type { AttemptRecord } from '../models/attempt-record.js';
import type { CampaignRun } from '../models/campaign-run.js';
import type { AttackOutcome } from '../models/vocabulary.js';
import { type RunSummary, summarizeRun } from '../render/run-summary.js';
import { type AttemptQuery, filterOf, orderOf } from './attempt-filter.js';

/**
 * Everything `witness view` reads from the memory, and nothing else does: the pages render only what is
 * built here. Reads go through a {@link MemoryReader}, so the viewer can never create, migrate or write a
 * database, and every read is one the database answers from its indexes (`Memory.runQueries`): the list
 * of runs and a run's summary from counts, a run's attempts a page at a time, an attempt by its key. No
 * page loads a run's attempts, so a page of a run of a hundred thousand attempts costs what one of ten
 * does.
 */

/** Attempts per page of a run's table. */
export const ATTEMPTS_PER_PAGE = 100;

export interface AttemptPageView {
  rows: AttemptRow[];
  /** How many attempts of the run the filter keeps. */
  matching: number;
  /** The cursor of the next page; null on the last. */
  next: string | null;
}

/** One attempt in full, with what its page links to. */
export interface AttemptView {
  run: CampaignRun;
  record: AttemptRecord;
  /** A benign control attack (`control: true`): left out of the success rate, listed apart. */
  control: boolean;
  previous?: AttemptKey | undefined;
  next?: AttemptKey | undefined;
  /** For a round of an adaptive attack's chain: every round of it, and the text planted the round before. */
  rounds?: Array<{ attack: string; attempt: number; round: number; outcome: AttackOutcome }> | undefined;
  previousInjection?: string | undefined;
}

export class ViewReadModel {
  readonly #reader: MemoryReader;

  constructor(reader: MemoryReader) {
    this.#reader = reader;
  }

  get location(): string {
    return `${this.#reader.location.backend} ${this.#reader.location.target}`;
  }

  /** Every stored run with its summary, newest first (a run is listed from its start, before any attempt). */
  async listRuns(): Promise<RunSummary[]> {
    const summaries = await this.#reader.read(async (memory) => {
      const runs = await memory.listRuns();
      const counts = await memory.runQueries.runCounts();
      return runs.map((run) => summarizeRun(run, counts.get(run.runId) ?? emptyRunCounts()));
    });
    return summaries.sort(newestFirst);
  }

  async getRun(runId: string): Promise<RunSummary | undefined> {
    return this.#reader.read(async (memory) => {
      const run = await optional(memory.getRun(runId));
      if (run === undefined) return undefined;
      const counts = await memory.runQueries.runCounts([runId]);
      return summarizeRun(run, counts.get(runId) ?? emptyRunCounts());
    });
  }

  /**
   * One page of a run's attempts as the query filters and orders them, and how many it keeps in all; a
   * cursor the viewer did not give is an InvalidOptionError.
   */
  async pageAttempts(run: CampaignRun, query: AttemptQuery): Promise<AttemptPageView> {
    const filter = filterOf(run, query);
    return this.#reader.read(async (memory) => {
      const page = await memory.runQueries.pageAttempts(run.runId, {
        ...filter,
        order: orderOf(query),
        descending: query.order === 'desc',
        limit: ATTEMPTS_PER_PAGE,
        after: query.after,
      });
      const matching = await memory.runQueries.countAttempts(run.runId, filter);
      return { rows: page.rows, matching, next: page.next };
    });
  }

  /** One attempt in full with its neighbours in the run's order; undefined when the run has no such attempt. */
  async getAttempt(runId: string, key: AttemptKey): Promise<AttemptView | undefined> {
    return this.#reader.read(async (memory) => {
      const run = await optional(memory.getRun(runId));
      if (run === undefined) return undefined;
      const record = await memory.runQueries.getAttempt(runId, key);
      if (record === undefined) return undefined;
      const here = { attack: record.attack, attempt: record.attempt, round: record.round };
      const neighbours = await memory.runQueries.neighbours(runId, here);
      const control = run.attacks.some((attack) => attack.id === record.attack && attack.control === true);
      const view: AttemptView = { run, record, control: control || record.control === true, ...neighbours };
      if (record.chain !== undefined) {
        view.rounds = await memory.runQueries.chainRounds(runId, record.chain);
        if ((record.round ?? 1) > 1) {
          const before = await memory.runQueries.getAttempt(runId, {
            ...here,
            round: (record.round ?? 1) - 1,
          });
          view.previousInjection = before?.adaptation?.injection;
        }
      }
      return view;
    });
  }

  /** Two runs' attempts paired by attack, number and round: the first changes and the counts. */
  async pairAttempts(left: string, right: string, limit: number): Promise<PairedAttempts> {
    return this.#reader.read((memory) => memory.runQueries.pairAttempts(left, right, limit));
  }

  /**
   * A short token that changes whenever a run or an attempt is stored (in one run, or anywhere when `runId`
   * is undefined). Pages poll it to update while a campaign runs.
   */
  async changeToken(runId?: string): Promise<string> {
    return this.#reader.read((memory) => memory.runQueries.changeToken(runId));
  }
}

async function optional<T>(read: Promise<T>): Promise<T | undefined> {
  try {
    return await read;
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    throw error;
  }
}

function newestFirst(a: RunSummary, b: RunSummary): number {
  return a.run.startedAt < b.run.startedAt ? 1 : a.run.startedAt > b.run.startedAt ? -1 : 0;
}
