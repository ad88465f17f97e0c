import type { Command } from 'commander';
import { tuneAcquisitionThreadsForCampaign } from '../../attacks/campaign-threads.js';
import { FAIL_ON_OUTCOMES, type FailOnOutcome } from '../../attacks/outcome.js';
import { tuneHeapForCampaign } from '../campaign-heap.js';
import { readPositiveInt } from '../flags.js';
import type { CliIo } from '../io.js';
import { dbOption, resolveDb } from '../memory-option.js';
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
    .option(
      '--dry-run',
      'run only the preflight (template, sandbox, network, programs, model keys and endpoints, bait) and print the plan; no attempt runs (exit 0 when every check passes, 2 otherwise)',
    )
    .option(
      '--no-preflight',
      'skip the checks made before the first attempt (a campaign that cannot work then fails attempt by attempt)',
    )
    .action((file: string | undefined, options: Record<string, unknown>) => runCommand(file, options, io));
}

/** `witness run`: cancel a queued run, check the campaign (--dry-run), queue it, or run it here. */
async function runCommand(
  file: string | undefined,
  options: Record<string, unknown>,
  io: CliIo,
): Promise<void> {
  if (typeof options.cancel === 'string') {
    const { cancelQueuedRun } = await import('./run-queue.js');
    return cancelQueuedRun(options.cancel, options, io);
  }
  if (file === undefined) throw new UsageError('witness run needs a campaign file (or --cancel RUN)');
  if (options.dryRun === true) return dryRun(file, options, io);
  if (options.queue === true) {
    const { submitQueuedRun } = await import('./run-queue.js');
    return submitQueuedRun(file, options, io);
  }
  for (const flag of ['wait', 'runId', 'jobGrace'] as const) {
    if (options[flag] !== undefined) throw new UsageError(`--${kebab(flag)} needs --queue`);
  }
  // A campaign is a long steady stream of short-lived allocations: collect sooner (see campaign-heap.ts).
  tuneHeapForCampaign(process.execArgv);
  tuneAcquisitionThreadsForCampaign();
  const { runLocalCampaign } = await import('./run-local.js');
  await runLocalCampaign(
    file,
    {
      db: resolveDb(options, io.env),
      failOn: readFailOn(options.failOn),
      concurrency: readConcurrency(options),
      keepWorkspaces: options.keepWorkspaces === true,
      json: options.json === true,
      report: typeof options.report === 'string' ? options.report : undefined,
      junit: typeof options.junit === 'string' ? options.junit : undefined,
      preflight: options.preflight !== false,
    },
    io,
  );
}

/** `--dry-run`: the preflight and the plan; a flag about running attempts is refused. */
async function dryRun(file: string, options: Record<string, unknown>, io: CliIo): Promise<void> {
  for (const flag of ['report', 'junit', 'failOn', 'keepWorkspaces', 'wait', 'runId', 'jobGrace'] as const) {
    if (options[flag] !== undefined)
      throw new UsageError(`--${kebab(flag)} has nothing to do with --dry-run, which runs no attempt`);
  }
  if (options.preflight === false) throw new UsageError('--dry-run is the preflight: drop --no-preflight');
  const { dryRunCampaign } = await import('./run-preflight.js');
  return dryRunCampaign(
    file,
    { db: resolveDb(options, io.env), json: options.json === true, concurrency: readConcurrency(options) },
    io,
  );
}

function readConcurrency(options: Record<string, unknown>): number | undefined {
  return options.concurrency === undefined
    ? undefined
    : readPositiveInt('--concurrency', options.concurrency);
}

/** `failOn` → `fail-on`: an option's name as typed. */
function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
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
