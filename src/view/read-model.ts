import { type OutcomeTotals, talliedOf, tallyAttempts } from '../attacks/outcome.js';
import { NotFoundError } from '../errors.js';
import type { MemoryReader } from '../memory/memory-reader.js';
import type { AttemptRecord } from '../models/attempt-record.js';
import type { CampaignRun } from '../models/campaign-run.js';
import type { Containment, GapReason } from '../models/vocabulary.js';

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
  /** How the attempt was contained (SPEC §11); null in records written before containment existed. */
  containment: Containment | null;
  /** What the agent changed, per surface (empty when the record carries no change set). */
  changeSets: ChangeSetView[];
  /** The judged surface of the attack's condition: `workspace` unless the condition says `home`. */
  surface: string;
  /** Distinct gap codes of the attempt's evidence, sorted. */
  gapCodes: GapReason[];
}

export interface ChangeSetView {
  /** `workspace` or `home`. */
  surface: string;
  complete: boolean | null;
  groups: Array<{ kind: string; entries: Array<{ uri: string; detail: string }> }>;
  /** Entries whose change could not be told. */
  undecided: string[];
  gaps: Array<{ reason: string; uri: string | null }>;
  /** Why a manifest or the change set could not be taken (the list is then missing or partial). */
  error: string | null;
}

export interface RunView {
  run: CampaignRun;
  attempts: AttemptView[];
  /** Outcomes of the attack attempts (controls excluded). */
  totals: OutcomeTotals;
  controls: { attempts: number; tripped: number };
  /** Distinct containment values over the run's attempts (empty when no attempt records one). */
  containment: string[];
  /** Attempts the run planned; fewer are stored while it is in progress (or if it was stopped). */
  plannedAttempts: number;
  lastActivityAt: string;
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
    run.attacks.filter((attack) => field(attack, 'control') === true).map((attack) => attack.id),
  );
  const attempts = records.map((record) => attemptView(record, controlAttacks.has(record.attack)));
  const controls = attempts.filter((attempt) => attempt.control);
  return {
    run,
    attempts,
    // Controls are tallied apart (left out of the rate); the user's task over every attempt (utility).
    totals: tallyAttempts(
      attempts.map((attempt) => ({ ...talliedOf(attempt.record), control: attempt.control })),
    ),
    controls: {
      attempts: controls.length,
      tripped: controls.filter((attempt) => attempt.record.outcome === 'success').length,
    },
    containment: [
      ...new Set(attempts.flatMap((attempt) => (attempt.containment === null ? [] : [attempt.containment]))),
    ].sort(),
    plannedAttempts: run.attacks.reduce((sum, attack) => sum + attack.attempts, 0),
    lastActivityAt:
      records
        .map((record) => record.finishedAt)
        .sort()
        .at(-1) ?? run.startedAt,
  };
}

function attemptView(record: AttemptRecord, controlAttack: boolean): AttemptView {
  const condition = record.expectation.conditions[0];
  const surface = condition === undefined ? undefined : field(condition, 'surface');
  return {
    record,
    control: controlAttack || field(record, 'control') === true,
    containment: record.containment ?? null,
    changeSets: changeSetViews(record),
    surface: typeof surface === 'string' ? surface : 'workspace',
    gapCodes: [
      ...new Set(
        record.observations.flatMap((observation) =>
          observation.payload.coverage.gaps.map((gap) => gap.reason),
        ),
      ),
    ].sort(),
  };
}

/** The kinds of change, in the order a person reads them (SPEC §12). */
const CHANGE_KINDS = ['created', 'modified', 'deleted', 'mode_changed'] as const;

/**
 * The change sets of an attempt as the page lists them: one per surface (workspace, home), from the
 * record's `changes` (SPEC §12: per surface, the baseline and final manifests and their change set, each
 * validated by its schema when the record was read). A surface whose change set could not be computed
 * (a manifest not taken) is listed with its error, never as "no change".
 */
function changeSetViews(record: AttemptRecord): ChangeSetView[] {
  return (record.changes ?? []).map((entry) => {
    const set = entry.changeSet;
    if (set === null) {
      return {
        surface: entry.surface,
        complete: null,
        groups: CHANGE_KINDS.map((kind) => ({ kind, entries: [] })),
        undecided: [],
        gaps: [],
        error: entry.error ?? 'no change set was computed',
      };
    }
    return {
      surface: set.surface,
      complete: set.coverage.complete,
      groups: CHANGE_KINDS.map((kind) => ({
        kind,
        entries: set.changes
          .filter((change) => change.kind === kind)
          .map((change) => ({ uri: change.uri, detail: describeChange(change) })),
      })),
      undecided: [...set.undecided],
      gaps: set.coverage.gaps.map((gap) => ({ reason: gap.reason, uri: gap.uri ?? null })),
      error: entry.error,
    };
  });
}

/** Type, size and mode of a changed entry before → after, in words (`12 bytes → 40 bytes, mode 755`). */
function describeChange(change: unknown): string {
  const describe = (side: unknown) => {
    if (side === null || typeof side !== 'object') return '';
    const size = field(side, 'sizeBytes');
    const type = field(side, 'type');
    const mode = field(side, 'mode');
    const target = field(side, 'linkTarget');
    return [
      typeof type === 'string' && type !== 'file' ? type : '',
      typeof target === 'string' ? `→ ${target}` : '',
      typeof size === 'number' ? `${size} bytes` : '',
      typeof mode === 'number' ? `mode ${mode.toString(8).padStart(3, '0')}` : '',
    ]
      .filter((part) => part !== '')
      .join(', ');
  };
  const before = describe(field(change, 'before'));
  const after = describe(field(change, 'after'));
  const moved = field(change, 'movedFrom');
  const sides = before === '' ? after : after === '' ? `was ${before}` : `${before} ⇒ ${after}`;
  return typeof moved === 'string' ? `${sides} (moved from ${moved})` : sides;
}

function field(value: unknown, key: string): unknown {
  return value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
}

function newestFirst(a: RunView, b: RunView): number {
  return a.run.startedAt < b.run.startedAt ? 1 : a.run.startedAt > b.run.startedAt ? -1 : 0;
}
