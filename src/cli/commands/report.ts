import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { CampaignRun } from '../../models/campaign-run.js';
import { renderReportHtml } from '../../render/report-html.js';
import { DEFAULT_REPORT_BOUNDS } from '../../render/report-run.js';
import { storedReportRun } from '../../render/stored-report-run.js';
import { readPositiveInt } from '../flags.js';
import type { CliIo } from '../io.js';
import { dbOption, READ_ONLY, resolveDb, withMemory } from '../memory-option.js';
import { excerpt } from '../render.js';
import { UsageError } from '../usage-error.js';

export function registerReport(program: Command, io: CliIo): void {
  program
    .command('report')
    .description('write a self-contained HTML report of stored campaign runs (viewing it needs no network)')
    .option('--out <file>', 'where to write the report', 'witness-report.html')
    .option('--campaign <name>', "only this campaign's runs")
    .option('--run <id>', 'only this run (its id is printed by witness run)')
    .option('--latest', 'only the most recent run')
    .option(
      '--max-cards <n>',
      `full cards per kind of attempt that needs reading (successes, undetermined, errors, tripped controls); the rest are counted (default ${DEFAULT_REPORT_BOUNDS.cardsPerOutcome})`,
    )
    .addOption(dbOption())
    .action(async (options: Record<string, unknown>) => {
      const out = typeof options.out === 'string' ? options.out : 'witness-report.html';
      const db = resolveDb(options, io.env);
      const filter = {
        campaign: typeof options.campaign === 'string' ? options.campaign : undefined,
        runId: typeof options.run === 'string' ? options.run : undefined,
      };
      const bounds = {
        ...DEFAULT_REPORT_BOUNDS,
        ...(options.maxCards === undefined
          ? {}
          : { cardsPerOutcome: readPositiveInt('--max-cards', options.maxCards) }),
      };
      // Counts and the attempts shown are read by the database's queries: the report's memory and time
      // grow with what it shows, never with the runs' attempts.
      const { reports, stored } = await withMemory(
        db,
        async (memory) => {
          const listed = await memory.listRuns({ campaign: filter.campaign });
          const matching =
            filter.runId === undefined ? listed : listed.filter((run) => run.runId === filter.runId);
          const runs = options.latest === true ? matching.slice(-1) : matching;
          if (runs.length === 0) {
            const filtered = filter.campaign !== undefined || filter.runId !== undefined;
            // Only when nothing matched: what the memory does hold, so the message can name it.
            return { reports: [], stored: filtered ? await memory.listRuns() : listed };
          }
          const reports = [];
          for (const run of runs) reports.push(await storedReportRun(memory.runQueries, run, bounds));
          return { reports, stored: listed };
        },
        READ_ONLY,
      );
      if (reports.length === 0) throw new UsageError(noMatchMessage(db, filter, stored));
      await writeFile(out, renderReportHtml(reports));
      const attempts = reports.reduce((sum, entry) => sum + entry.attempts, 0);
      io.err(`report of ${reports.length} run(s), ${attempts} attempt(s) written to ${out}\n`);
    });
}

/** Why no run matched: an empty memory, or a filter naming nothing stored (then what is stored). */
function noMatchMessage(
  db: string,
  filter: { campaign?: string | undefined; runId?: string | undefined },
  stored: readonly CampaignRun[],
): string {
  if (stored.length === 0) {
    return `no campaign run is stored in ${excerpt(db, 300)}; run \`witness run <campaign.yaml>\` first`;
  }
  const campaigns = [...new Set(stored.map((run) => run.campaign))];
  const asked = [
    ...(filter.campaign === undefined ? [] : [`campaign ${JSON.stringify(excerpt(filter.campaign, 80))}`]),
    ...(filter.runId === undefined ? [] : [`run ${JSON.stringify(excerpt(filter.runId, 80))}`]),
  ].join(' and ');
  const runs = stored.slice(-5).map((run) => `${excerpt(run.runId, 80)} (${excerpt(run.campaign, 60)})`);
  return `no stored run matches ${asked} in ${excerpt(db, 300)}; it holds ${stored.length} run(s) of campaign(s) ${campaigns
    .slice(0, 10)
    .map((name) => JSON.stringify(excerpt(name, 60)))
    .join(', ')}; latest runs: ${runs.join(', ')}`;
}
