import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { loadReportRuns, type StoredRun } from '../../attacks/memory-recorder.js';
import { renderReportHtml } from '../../render/report-html.js';
import { DEFAULT_REPORT_BOUNDS, reportRunOf } from '../../render/report-run.js';
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
      const { runs: matching, stored } = await withMemory(
        db,
        async (memory) => {
          const runs = await loadReportRuns(memory, filter);
          const filtered = filter.campaign !== undefined || filter.runId !== undefined;
          // Only when nothing matched: what the memory does hold, so the message can name it.
          const all = runs.length === 0 && filtered ? await loadReportRuns(memory) : runs;
          return { runs, stored: all };
        },
        READ_ONLY,
      );
      const runs = options.latest === true ? matching.slice(-1) : matching;
      if (runs.length === 0) throw new UsageError(noMatchMessage(db, filter, stored));
      const bounds = {
        ...DEFAULT_REPORT_BOUNDS,
        ...(options.maxCards === undefined
          ? {}
          : { cardsPerOutcome: readPositiveInt('--max-cards', options.maxCards) }),
      };
      await writeFile(
        out,
        renderReportHtml(runs.map((entry) => reportRunOf(entry.run, entry.attempts, bounds))),
      );
      const attempts = runs.reduce((sum, entry) => sum + entry.attempts.length, 0);
      io.err(`report of ${runs.length} run(s), ${attempts} attempt(s) written to ${out}\n`);
    });
}

/** Why no run matched: an empty memory, or a filter naming nothing stored (then what is stored). */
function noMatchMessage(
  db: string,
  filter: { campaign?: string | undefined; runId?: string | undefined },
  stored: readonly StoredRun[],
): string {
  if (stored.length === 0) {
    return `no campaign run is stored in ${excerpt(db, 300)}; run \`witness run <campaign.yaml>\` first`;
  }
  const campaigns = [...new Set(stored.map((entry) => entry.run.campaign))];
  const asked = [
    ...(filter.campaign === undefined ? [] : [`campaign ${JSON.stringify(excerpt(filter.campaign, 80))}`]),
    ...(filter.runId === undefined ? [] : [`run ${JSON.stringify(excerpt(filter.runId, 80))}`]),
  ].join(' and ');
  const runs = stored
    .slice(-5)
    .map((entry) => `${excerpt(entry.run.runId, 80)} (${excerpt(entry.run.campaign, 60)})`);
  return `no stored run matches ${asked} in ${excerpt(db, 300)}; it holds ${stored.length} run(s) of campaign(s) ${campaigns
    .slice(0, 10)
    .map((name) => JSON.stringify(excerpt(name, 60)))
    .join(', ')}; latest runs: ${runs.join(', ')}`;
}
