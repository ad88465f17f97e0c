import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { AttemptRecord } from '../../attacks/attempt-record.js';
import { tuneAcquisitionThreadsForCampaign } from '../../attacks/campaign-threads.js';
import {
  type AttemptOutcome,
  attemptLabel,
  FAIL_ON_OUTCOMES,
  type FailOnOutcome,
  gateFailures,
  matchedFailOn,
} from '../../attacks/outcome.js';
import { FailOnMatchedError } from '../../errors.js';
import type { TaskOutcome } from '../../models/vocabulary.js';
import type { TableLine } from '../../render/summary-table.js';
import { tuneHeapForCampaign } from '../campaign-heap.js';
import { readPositiveInt } from '../flags.js';
import type { CliIo } from '../io.js';
import { dbOption, resolveDb, withMemory } from '../memory-option.js';
import { progressReporter } from '../progress.js';
import { excerpt } from '../render.js';
import { UsageError } from '../usage-error.js';

export function registerRun(program: Command, io: CliIo): void {
  program
    .command('run')
    .description('run a campaign of attacks against a target, each attempt in a fresh workspace')
    .argument('[campaign]', 'campaign file (YAML)')
    .option('--concurrency <n>', 'attempts run at once, each in its own workspace (overrides the campaign)')
    .option(
      '--keep-workspaces',
      "leave each attempt's workspace on disk (their paths are printed and in the report)",
    )
    .option('--report <file>', 'also write the HTML report of this run to <file>')
    .option('--json', 'print { run, totals, attempts } as JSON instead of the table')
    .option(
      '--fail-on <outcomes>',
      "exit 3 when any attempt ended so: a comma-separated list of success, undetermined, error, control (a tripped control), task_failure (the user's task not done)",
    )
    .option('--junit <file>', 'also write JUnit XML (one test case per attempt) to <file>, for CI dashboards')
    .addOption(dbOption())
    .option('--queue', 'enqueue one job per attempt in PostgreSQL for `witness worker`s; print the run id')
    .option('--wait', 'with --queue: follow the run and print the table when every attempt is settled')
    .option('--run-id <id>', 'with --queue: (re)submit this run; attempts already queued are not added')
    .option(
      '--job-grace <seconds>',
      "with --queue: how long past attemptTimeoutMs a stuck worker keeps an attempt before retry (120); a lost worker's attempts come back sooner, when their lease lapses",
    )
    .option('--cancel <run>', 'stop handing out the attempts of a queued run')
    .action(async (file: string | undefined, options: Record<string, unknown>) => {
      if (typeof options.cancel === 'string') {
        const { cancelQueuedRun } = await import('./run-queue.js');
        return cancelQueuedRun(options.cancel, options, io);
      }
      if (file === undefined) throw new UsageError('witness run needs a campaign file (or --cancel RUN)');
      if (options.queue === true) {
        const { submitQueuedRun } = await import('./run-queue.js');
        return submitQueuedRun(file, options, io);
      }
      for (const flag of ['wait', 'runId', 'jobGrace'] as const) {
        if (options[flag] !== undefined)
          throw new UsageError(`--${flag.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} needs --queue`);
      }
      // Loaded when the command runs, not when the CLI starts: targets pull in the MCP SDK and friends.
      const [
        { openCampaignSession },
        { renderJunitXml },
        { MemoryAttemptRecorder },
        { renderReportHtml },
        { ReportCollector },
        { runCampaignStreamed },
        table,
        { AttemptSpool },
      ] = await Promise.all([
        import('../../attacks/campaign-session.js'),
        import('../../render/junit-report.js'),
        import('../../attacks/memory-recorder.js'),
        import('../../render/report-html.js'),
        import('../../render/report-run.js'),
        import('../../attacks/run-campaign.js'),
        import('../../render/summary-table.js'),
        import('../../attacks/attempt-spool.js'),
      ]);
      // A campaign is a long steady stream of short-lived allocations: collect sooner (see campaign-heap.ts).
      tuneHeapForCampaign(process.execArgv);
      tuneAcquisitionThreadsForCampaign();
      const { renderTableLines, renderTotals, tableLineOf } = table;
      const failOn = readFailOn(options.failOn);
      const db = resolveDb(options, io.env);
      const session = await openCampaignSession(file, { hostEnv: io.env, memoryLocation: db });
      const { campaign, target, redactor } = session;
      const concurrency =
        options.concurrency === undefined ? undefined : readPositiveInt('--concurrency', options.concurrency);
      const progress = progressReporter(io, campaign.name);
      // What this process keeps per attempt is the few fields below and, for the table, one line of text:
      // never the record, so a campaign of thousands of attempts runs in flat memory. Records go
      // to a private spool file only when an output needs them whole (--json, --junit). The report keeps
      // only what it shows (its collector holds bounded cards and counts).
      const needsRecords = options.json === true || typeof options.junit === 'string';
      const spool = needsRecords ? await AttemptSpool.create() : undefined;
      const run = session.newRun();
      const report = typeof options.report === 'string' ? new ReportCollector(run) : undefined;
      const finished: AttemptSummary[] = [];
      const lines: TableLine[] = [];
      try {
        const result = await withMemory(db, (memory) =>
          runCampaignStreamed({
            campaign,
            target,
            run,
            attackers: (attacker) => session.attackers(attacker),
            recorder: new MemoryAttemptRecorder(memory),
            concurrency,
            keepWorkspaces: options.keepWorkspaces === true,
            redactor,
            onProgress: (event) => progress.update(event),
            onRecord: async (record, index) => {
              finished[index] = {
                attack: record.attack,
                attempt: record.attempt,
                outcome: record.outcome,
                control: record.control,
                task: record.task === undefined ? undefined : { outcome: record.task.outcome },
                chain: record.chain,
                round: record.round,
                kept: record.workspace?.kept === true ? record.workspace.root : undefined,
              };
              if (options.json !== true) lines[index] = tableLineOf({ record });
              report?.add(record, index);
              await spool?.put(index, record);
            },
            signal: io.signal,
          }),
        );
        progress.done();
        const attempts = finished.filter((summary): summary is AttemptSummary => summary !== undefined);
        io.err(`stored run ${result.run.runId} in ${excerpt(db, 300)}\n`);
        for (const attempt of attempts) {
          if (attempt.kept !== undefined) {
            io.err(
              `kept workspace of ${attempt.attack} #${attempt.attempt}: ${excerpt(attempt.kept, 500)}\n`,
            );
          }
        }
        // The JUnit XML is one document over every attempt: the records are read back for it after the
        // run. --json reads the spool record by record.
        let records: AttemptRecord[] | undefined;
        const allRecords = async () => {
          records ??= (await spool?.records()) ?? [];
          return records;
        };
        if (typeof options.report === 'string' && report !== undefined) {
          await writeFile(options.report, renderReportHtml([report.result()]));
          io.err(`report written to ${options.report}\n`);
        }
        if (typeof options.junit === 'string') {
          await writeFile(options.junit, renderJunitXml(result.run, await allRecords(), failOn));
          io.err(`JUnit XML written to ${options.junit}\n`);
        }
        if (options.json === true) {
          // The same bytes as one JSON.stringify of { run, totals, attempts }, written attempt by attempt from
          // the spool (each record's text as JSON.stringify gave it when it finished).
          io.out(
            `{"run":${JSON.stringify(result.run)},"totals":${JSON.stringify(result.totals)},"attempts":[`,
          );
          let first = true;
          for await (const text of spool?.texts() ?? []) {
            io.out(`${first ? '' : ','}${text}`);
            first = false;
          }
          io.out(']}\n');
        } else {
          io.out(`${renderTableLines(lines.filter((line): line is TableLine => line !== undefined))}\n\n`);
          io.out(`${renderTotals(campaign.name, result.totals)}\n`);
        }
        records = undefined;
        gate(attempts, failOn);
      } finally {
        await spool?.dispose();
      }
    });
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

/** --fail-on: exit 3 naming the first few attempts that ended so. */
function gate(attempts: readonly AttemptSummary[], failOn: ReadonlySet<FailOnOutcome>): void {
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
}

/** `--fail-on a,b`: each a known outcome; the error names the unknown one and the choices. */
function readFailOn(raw: unknown): Set<FailOnOutcome> {
  if (raw === undefined) return new Set();
  const out = new Set<FailOnOutcome>();
  for (const part of String(raw).split(',')) {
    const name = part.trim();
    if (!(FAIL_ON_OUTCOMES as readonly string[]).includes(name)) {
      throw new UsageError(
        `--fail-on takes a comma-separated list of ${FAIL_ON_OUTCOMES.join(', ')}; got ${JSON.stringify(name)}`,
      );
    }
    out.add(name as FailOnOutcome);
  }
  return out;
}
