import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { attemptLabel, FAIL_ON_OUTCOMES, type FailOnOutcome, gateFailures } from '../../attacks/outcome.js';
import { FailOnMatchedError } from '../../errors.js';
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
      'exit 3 when any attempt ended so: a comma-separated list of success, undetermined, error, control (a tripped control)',
    )
    .option('--junit <file>', 'also write JUnit XML (one test case per attempt) to <file>, for CI dashboards')
    .addOption(dbOption())
    .option('--queue', 'enqueue one job per attempt in PostgreSQL for `witness worker`s; print the run id')
    .option('--wait', 'with --queue: follow the run and print the table when every attempt is settled')
    .option('--run-id <id>', 'with --queue: (re)submit this run; attempts already queued are not added')
    .option(
      '--job-grace <seconds>',
      'with --queue: how long past attemptTimeoutMs a job may run before retry (120)',
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
        { loadCampaignFile },
        { renderJunitXml },
        { MemoryAttemptRecorder },
        { renderReportHtml },
        { runCampaign },
        table,
        targets,
        { prepareCampaignContainment },
      ] = await Promise.all([
        import('../../attacks/campaign-file.js'),
        import('../../attacks/junit-report.js'),
        import('../../attacks/memory-recorder.js'),
        import('../../attacks/report-html.js'),
        import('../../attacks/run-campaign.js'),
        import('../../attacks/summary-table.js'),
        import('../../targets/create-target.js'),
        import('../../attacks/campaign-containment.js'),
      ]);
      const { renderAttemptTable, renderTotals } = table;
      const { createTarget } = targets;
      const failOn = readFailOn(options.failOn);
      const campaign = await loadCampaignFile(file);
      const db = resolveDb(options, io.env);
      // Refuses (exit 2, naming the fix) an out-of-process target when no sandbox can be had.
      const { sandbox, redactor } = await prepareCampaignContainment(campaign, {
        hostEnv: io.env,
        memoryLocation: db,
        campaignFile: file,
      });
      const target = createTarget(campaign.target, { env: io.env, sandbox, redactor });
      const concurrency =
        options.concurrency === undefined ? undefined : readPositiveInt('--concurrency', options.concurrency);
      const progress = progressReporter(io, campaign.name);
      const result = await withMemory(db, (memory) =>
        runCampaign({
          campaign,
          target,
          recorder: new MemoryAttemptRecorder(memory),
          concurrency,
          keepWorkspaces: options.keepWorkspaces === true,
          redactor,
          onProgress: (event) => progress.update(event),
          signal: io.signal,
        }),
      );
      progress.done();
      io.err(`stored run ${result.run.runId} in ${excerpt(db, 300)}\n`);
      if (options.keepWorkspaces === true) {
        for (const attempt of result.attempts) {
          if (attempt.workspace?.kept === true) {
            io.err(
              `kept workspace of ${attempt.attack} #${attempt.attempt}: ${excerpt(attempt.workspace.root, 500)}\n`,
            );
          }
        }
      }
      if (typeof options.report === 'string') {
        await writeFile(options.report, renderReportHtml([{ run: result.run, attempts: result.attempts }]));
        io.err(`report written to ${options.report}\n`);
      }
      if (typeof options.junit === 'string') {
        await writeFile(options.junit, renderJunitXml(result.run, result.attempts, failOn));
        io.err(`JUnit XML written to ${options.junit}\n`);
      }
      if (options.json === true) {
        // The same bytes as one JSON.stringify of { run, totals, attempts }, written attempt by attempt: a
        // campaign of thousands of attempts never holds its whole report as one string (issue 14).
        io.out(`{"run":${JSON.stringify(result.run)},"totals":${JSON.stringify(result.totals)},"attempts":[`);
        result.attempts.forEach((attempt, i) => {
          io.out(`${i === 0 ? '' : ','}${JSON.stringify(attempt)}`);
        });
        io.out(']}\n');
      } else {
        io.out(`${renderAttemptTable(result.attempts.map((record) => ({ record })))}\n\n`);
        io.out(`${renderTotals(campaign.name, result.totals)}\n`);
      }
      const failed = gateFailures(result.attempts, failOn);
      if (failed.length > 0) {
        const named = failed
          .slice(0, 5)
          .map((attempt) => `${attempt.attack}#${attempt.attempt} (${attemptLabel(attempt)})`)
          .join(', ');
        throw new FailOnMatchedError(
          `--fail-on ${[...failOn].join(',')}: ${failed.length} attempt${failed.length === 1 ? '' : 's'} ended so: ${named}${failed.length > 5 ? ', …' : ''}`,
        );
      }
    });
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

function readPositiveInt(flag: string, raw: unknown): number {
  const text = String(raw);
  if (!/^[1-9][0-9]*$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw new UsageError(`${flag} takes a positive whole number, got ${JSON.stringify(text)}`);
  }
  return Number(text);
}
