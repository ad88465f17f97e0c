import type { AttemptRecord, CampaignRun } from '../attacks/attempt-record.js';
import { loadReportRuns } from '../attacks/memory-recorder.js';
import { type OutcomeTotals, tallyOutcomes } from '../attacks/outcome.js';
import type { MemoryReader } from '../memory/memory-reader.js';
import type { GapReason } from '../models/vocabulary.js';

/**
 * Everything `witness view` reads from the memory, and nothing else does: the pages render only the view
 * records built here. Reads go through a {@link MemoryReader}, so the viewer can never create, migrate or
 * write a database.
 *
 * Runs are rebuilt from stored attack results exactly as `witness report` rebuilds them
 * ({@link loadReportRuns}). Fields other lanes add to attempt records (`containment`, a `changeSet`,
 * `control`) are shown when a record carries them and ignored when it does not.
 */

export interface AttemptView {
  record: AttemptRecord;
  /** A benign control attack (`control: true`): left out of the success rate, listed apart. */
  control: boolean;
  /** How the attempt was contained (`none`, `bwrap`, …) when the record says. */
  containment: string | null;
  changeSet: ChangeSetView | null;
  /** The judged surface of the attack's condition: `workspace` unless the condition says `home`. */
  surface: string;
  /** Distinct gap codes of the attempt's evidence, sorted. */
  gapCodes: GapReason[];
}

export interface ChangeSetView {
  complete: boolean | null;
  groups: Array<{ kind: string; entries: Array<{ uri: string; detail: string }> }>;
  gaps: Array<{ reason: string; uri: string | null }>;
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

  /** Every stored run, newest first. */
  async listRuns(): Promise<RunView[]> {
    const runs = await this.#reader.read((memory) => loadReportRuns(memory));
    return runs.map(({ run, attempts }) => runView(run, attempts)).sort(newestFirst);
  }

  async getRun(runId: string): Promise<RunView | undefined> {
    const [entry] = await this.#reader.read((memory) => loadReportRuns(memory, { runId }));
    return entry === undefined ? undefined : runView(entry.run, entry.attempts);
  }

  /**
   * A short token that changes whenever an attempt is stored (in one run, or in any run when `runId` is
   * undefined). Pages poll it to update while a campaign runs.
   */
  async changeToken(runId?: string): Promise<string> {
    const results = await this.#reader.read((memory) => memory.listAttackResults());
    const mine = runId === undefined ? results : results.filter((result) => result.metadata.runId === runId);
    const last = mine.at(-1);
    return `${mine.length}-${last === undefined ? 'none' : last.id}`;
  }
}

function runView(run: CampaignRun, records: readonly AttemptRecord[]): RunView {
  const controlAttacks = new Set(
    run.attacks.filter((attack) => field(attack, 'control') === true).map((attack) => attack.id),
  );
  const attempts = records.map((record) => attemptView(record, controlAttacks.has(record.attack)));
  const counted = attempts.filter((attempt) => !attempt.control);
  const controls = attempts.filter((attempt) => attempt.control);
  return {
    run,
    attempts,
    totals: tallyOutcomes(counted.map((attempt) => attempt.record.outcome)),
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
  const containment = field(record, 'containment');
  return {
    record,
    control: controlAttack || field(record, 'control') === true,
    containment: typeof containment === 'string' ? containment : null,
    changeSet: changeSetView(field(record, 'changeSet')),
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
 * A change set as the page shows it. Records that carry one were validated by their own schema when read;
 * this only picks out what the page lists, so a shape it does not know shows as an empty set with a note
 * rather than failing the page.
 */
function changeSetView(value: unknown): ChangeSetView | null {
  if (value === null || typeof value !== 'object') return null;
  const complete = field(value, 'complete');
  const groups = CHANGE_KINDS.map((kind) => {
    const list = field(value, kind);
    const entries = Array.isArray(list)
      ? list.map((entry) => ({
          uri: typeof entry === 'string' ? entry : String(field(entry, 'uri') ?? '?'),
          detail: typeof entry === 'string' ? '' : describeChange(entry),
        }))
      : [];
    return { kind, entries };
  });
  const gapList = field(value, 'gaps');
  return {
    complete: typeof complete === 'boolean' ? complete : null,
    groups,
    gaps: Array.isArray(gapList)
      ? gapList.map((gap) => ({
          reason: String(field(gap, 'reason') ?? '?'),
          uri: typeof field(gap, 'uri') === 'string' ? (field(gap, 'uri') as string) : null,
        }))
      : [],
  };
}

/** Sizes and digests of a changed entry, in words (`12 bytes → 40 bytes`). */
function describeChange(entry: unknown): string {
  const before = field(entry, 'before');
  const after = field(entry, 'after');
  const describe = (side: unknown) => {
    if (side === null || typeof side !== 'object') return '';
    const size = field(side, 'sizeBytes');
    const type = field(side, 'type');
    const mode = field(side, 'mode');
    return [
      typeof type === 'string' && type !== 'file' ? type : '',
      typeof size === 'number' ? `${size} bytes` : '',
      typeof mode === 'number' ? `mode ${mode.toString(8)}` : typeof mode === 'string' ? `mode ${mode}` : '',
    ]
      .filter((part) => part !== '')
      .join(', ');
  };
  const parts = [describe(before), describe(after)].filter((part) => part !== '');
  return parts.join(' → ');
}

function field(value: unknown, key: string): unknown {
  return value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
}

function newestFirst(a: RunView, b: RunView): number {
  return a.run.startedAt < b.run.startedAt ? 1 : a.run.startedAt > b.run.startedAt ? -1 : 0;
}
