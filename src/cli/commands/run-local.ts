import { writeFile } from 'node:fs/promises';
import type { AttemptRecord, CampaignRun } from '../../attacks/attempt-record.js';
import type { AttemptSpool } from '../../attacks/attempt-spool.js';
import type { Campaign } from '../../attacks/campaign.js';
import {
  type AttemptOutcome,
  attemptLabel,
  type FailOnOutcome,
  gateFailures,
  matchedFailOn,
  type OutcomeTotals,
  tallyAttempts,
} from '../../attacks/outcome.js';
import type { AttemptRecorder } from '../../attacks/run-attempt.js';
import { FailOnMatchedError, InterruptedError, OutputFailedError, oneLineError } from '../../errors.js';
import type { TaskOutcome } from '../../models/vocabulary.js';
import type { ReportCollector } from '../../render/report-run.js';
import type { TableLine } from '../../render/summary-table.js';
import type { CliIo } from '../io.js';
import { withMemory } from '../memory-option.js';
import { progressReporter } from '../progress.js';
import { excerpt } from '../render.js';

/**
 * `witness run` of a local campaign: open the campaign session, run it attempt by attempt into the memory
 * (each finished record spooled when an output needs it whole), then print the table (or JSON), write the
 * report and JUnit, and exit with the `--fail-on` status.
 *
 * The run always ends with what it has (SPEC §13): an attempt that failed or could not be stored is that
 * attempt's outcome; an output file that cannot be written is named after the others are written; and on
 * Ctrl-C the attempts that finished are printed with their totals, the run id and where they are stored
 * before the exit status 130.
 */

export interface LocalRunFlags {
  db: string;
  failOn: ReadonlySet<FailOnOutcome>;
  concurrency: number | undefined;
  keepWorkspaces: boolean;
  json: boolean;
  report: string | undefined;
  junit: string | undefined;
  /** Check the campaign before the first attempt (`--no-preflight` skips it). */
  preflight: boolean;
}

export async function runLocalCampaign(file: string, flags: LocalRunFlags, io: CliIo): Promise<void> {
  // Loaded when the command runs, not when the CLI starts: targets pull in the MCP SDK and friends.
  const [{ openCampaignSession }, { MemoryAttemptRecorder }, { runCampaignStreamed }, { AttemptSpool }] =
    await Promise.all([
      import('../../attacks/campaign-session.js'),
      import('../../attacks/memory-recorder.js'),
      import('../../attacks/run-campaign.js'),
      import('../../attacks/attempt-spool.js'),
    ]);
  const { loadCheckedCampaign } = await import('./run-preflight.js');
  const checked = await loadCheckedCampaign(file, { preflight: flags.preflight, db: flags.db }, io);
  const session = await openCampaignSession(file, {
    hostEnv: io.env,
    memoryLocation: flags.db,
    campaign: checked,
  });
  const { campaign } = session;
  // Said once, before any attempt: sandbox: none is not containment.
  for (const warning of session.sandbox?.warnings ?? []) io.err(`witness: warning: ${warning}\n`);
  const run = session.newRun();
  const progress = progressReporter(io, campaign.name);
  // What this process keeps per attempt is a few fields and, for the table, one line of text: never the
  // record, so a campaign of thousands of attempts runs in flat memory. Records go to a private spool
  // file only when an output needs them whole (--json, --junit). The report keeps only what it shows (its
  // collector holds bounded cards and counts).
  const needsRecords = flags.json || flags.junit !== undefined;
  const spool = needsRecords ? await AttemptSpool.create() : undefined;
  const report =
    flags.report === undefined
      ? undefined
      : new (await import('../../render/report-run.js')).ReportCollector(run);
  const finished = await FinishedAttempts.create(!flags.json);
  try {
    const recorder = new TrackingRecorder();
    try {
      await withMemory(flags.db, (memory) =>
        runCampaignStreamed({
          campaign,
          target: session.target,
          run,
          attackers: (attacker) => session.attackers(attacker),
          recorder: recorder.over(new MemoryAttemptRecorder(memory)),
          concurrency: flags.concurrency,
          keepWorkspaces: flags.keepWorkspaces,
          redactor: session.redactor,
          onProgress: (event) => progress.update(event),
          onRecord: async (record, index) => {
            report?.add(record, index);
            finished.add(index, (await spool?.put(index, record)) ?? record);
          },
          signal: io.signal,
        }),
      );
    } catch (error) {
      progress.done();
      if (!io.signal.aborted) throw error;
      await printResult(io, { campaign, run, finished, spool, json: flags.json });
      throw interrupted(run, campaign, finished, recorder.started ? flags.db : undefined);
    }
    progress.done();
    io.err(`stored run ${run.runId} in ${excerpt(flags.db, 300)}\n`);
    for (const kept of finished.keptWorkspaces()) io.err(`${kept}\n`);
    await printResult(io, { campaign, run, finished, spool, json: flags.json });
    const unwritten = await writeOutputFiles(io, { run, spool, report, flags });
    gate(finished.attempts(), flags.failOn, unwritten);
  } finally {
    await spool?.dispose();
  }
}

/** Notes whether the run was stored (its `startRun` went through), for what an interrupted run says. */
class TrackingRecorder {
  started = false;

  over(recorder: AttemptRecorder): AttemptRecorder {
    return {
      startRun: async (run) => {
        await recorder.startRun(run);
        this.started = true;
      },
      recordExchange: (input) => recorder.recordExchange(input),
      scorerMemory: () => recorder.scorerMemory(),
      recordAttempt: (record, run) => recorder.recordAttempt(record, run),
    };
  }
}

/** What `witness run` keeps of each finished attempt while the campaign runs (the record is spooled). */
interface AttemptSummary {
  attack: string;
  attempt: number;
  outcome: AttemptOutcome;
  control?: boolean | undefined;
  task?: { outcome: TaskOutcome } | undefined;
  chain?: string | undefined;
  round?: number | undefined;
  /** The workspace's path when it was kept. */
  kept: string | undefined;
}

/** The finished attempts, by job index: their summaries and (for the table) their lines of text. */
class FinishedAttempts {
  readonly #summaries: AttemptSummary[] = [];
  readonly #lines: TableLine[] = [];
  readonly #lineOf: ((record: AttemptRecord) => TableLine) | undefined;

  private constructor(lineOf: ((record: AttemptRecord) => TableLine) | undefined) {
    this.#lineOf = lineOf;
  }

  /** With `withTable`, each attempt's table line is made when it finishes (then the record can go). */
  static async create(withTable: boolean): Promise<FinishedAttempts> {
    if (!withTable) return new FinishedAttempts(undefined);
    const { tableLineOf } = await import('../../render/summary-table.js');
    return new FinishedAttempts((record) => tableLineOf({ record }));
  }

  add(index: number, record: AttemptRecord): void {
    this.#summaries[index] = {
      attack: record.attack,
      attempt: record.attempt,
      outcome: record.outcome,
      control: record.control,
      task: record.task === undefined ? undefined : { outcome: record.task.outcome },
      chain: record.chain,
      round: record.round,
      kept: record.workspace?.kept === true ? record.workspace.root : undefined,
    };
    if (this.#lineOf !== undefined) this.#lines[index] = this.#lineOf(record);
  }

  attempts(): AttemptSummary[] {
    return this.#summaries.filter((summary): summary is AttemptSummary => summary !== undefined);
  }

  lines(): TableLine[] {
    return this.#lines.filter((line): line is TableLine => line !== undefined);
  }

  totals(): OutcomeTotals {
    return tallyAttempts(this.attempts());
  }

  keptWorkspaces(): string[] {
    return this.attempts().flatMap((attempt) =>
      attempt.kept === undefined
        ? []
        : [`kept workspace of ${attempt.attack} #${attempt.attempt}: ${excerpt(attempt.kept, 500)}`],
    );
  }
}

/** The table and totals, or `{ run, totals, attempts }` as JSON read record by record from the spool. */
async function printResult(
  io: CliIo,
  result: {
    campaign: Campaign;
    run: CampaignRun;
    finished: FinishedAttempts;
    spool: AttemptSpool | undefined;
    json: boolean;
  },
): Promise<void> {
  const totals = result.finished.totals();
  if (result.json) {
    // The same bytes as one JSON.stringify of { run, totals, attempts }, written attempt by attempt from
    // the spool (each record's text as JSON.stringify gave it when it finished).
    io.out(`{"run":${JSON.stringify(result.run)},"totals":${JSON.stringify(totals)},"attempts":[`);
    let first = true;
    for await (const text of result.spool?.texts() ?? []) {
      io.out(`${first ? '' : ','}${text}`);
      first = false;
    }
    io.out(']}\n');
    return;
  }
  const { renderTableLines, renderTotals } = await import('../../render/summary-table.js');
  io.out(`${renderTableLines(result.finished.lines())}\n\n`);
  io.out(`${renderTotals(result.campaign.name, totals)}\n`);
}

/**
 * The HTML report (from what its collector kept) and the JUnit XML (one document over every attempt, the
 * records read back from the spool). A file that cannot be written is named on stderr after the others
 * are written; the names are returned for the exit status.
 */
async function writeOutputFiles(
  io: CliIo,
  context: {
    run: CampaignRun;
    spool: AttemptSpool | undefined;
    report: ReportCollector | undefined;
    flags: LocalRunFlags;
  },
): Promise<string[]> {
  const { flags, run, spool, report } = context;
  const outputs: Array<{ file: string; what: string; render: () => Promise<string> }> = [];
  if (flags.report !== undefined && report !== undefined) {
    const { renderReportHtml } = await import('../../render/report-html.js');
    outputs.push({
      file: flags.report,
      what: 'report',
      render: async () => renderReportHtml([report.result()]),
    });
  }
  if (flags.junit !== undefined) {
    const { renderJunitXml } = await import('../../render/junit-report.js');
    outputs.push({
      file: flags.junit,
      what: 'JUnit XML',
      render: async () => renderJunitXml(run, (await spool?.records()) ?? [], flags.failOn),
    });
  }
  const unwritten: string[] = [];
  for (const output of outputs) {
    try {
      await writeFile(output.file, await output.render());
      io.err(`${output.what} written to ${excerpt(output.file, 300)}\n`);
    } catch (error) {
      io.err(
        `witness: the ${output.what} could not be written to ${excerpt(output.file, 300)}: ${oneLineError(error)}\n`,
      );
      unwritten.push(`the ${output.what} (${excerpt(output.file, 300)})`);
    }
  }
  return unwritten;
}

/**
 * --fail-on: exit 3 naming the first few attempts that ended so; otherwise exit 1 when an output file
 * could not be written (a CI step must not pass without its report).
 */
function gate(
  attempts: readonly AttemptSummary[],
  failOn: ReadonlySet<FailOnOutcome>,
  unwritten: readonly string[],
): void {
  const failed = gateFailures(attempts, failOn);
  if (failed.length > 0) {
    const named = failed
      .slice(0, 5)
      .map(
        (attempt) =>
          `${attempt.attack}#${attempt.attempt} (${matchedFailOn(attempt, failOn) === 'task_failure' ? 'task_failure' : attemptLabel(attempt)})`,
      )
      .join(', ');
    throw new FailOnMatchedError(
      `--fail-on ${[...failOn].join(',')}: ${failed.length} attempt${failed.length === 1 ? '' : 's'} ended so: ${named}${failed.length > 5 ? ', …' : ''}`,
    );
  }
  if (unwritten.length > 0) {
    throw new OutputFailedError(`the run finished, but ${unwritten.join(' and ')} could not be written`);
  }
}

/** The error a Ctrl-C ends the run with: what finished, the run id and where it is stored. */
function interrupted(
  run: CampaignRun,
  campaign: Campaign,
  finished: FinishedAttempts,
  db: string | undefined,
): InterruptedError {
  const total = campaign.attacks.reduce((sum, attack) => sum + (attack.attempts ?? campaign.attempts), 0);
  const count = finished.attempts().length;
  const where =
    db === undefined
      ? `run ${run.runId} was not stored (it was interrupted before its first attempt)`
      : `run ${run.runId} is stored in ${excerpt(db, 300)} (witness report --run ${run.runId} --db ${excerpt(db, 300)})`;
  return new InterruptedError(
    `interrupted: ${count} of ${total} attempt${total === 1 ? '' : 's'} finished; ${where}`,
  );
}
