import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { loadReportRuns } from '../../attacks/memory-recorder.js';
import { renderReportHtml } from '../../attacks/report-html.js';
import type { CliIo } from '../io.js';
import { dbOption, resolveDb, withMemory } from '../memory-option.js';
import { UsageError } from '../usage-error.js';

export function registerReport(program: Command, io: CliIo): void {
  program
    .command('report')
    .description('write a self-contained HTML report of stored campaign runs (viewing it needs no network)')
    .option('--out <file>', 'where to write the report', 'witness-report.html')
    .option('--campaign <name>', "only this campaign's runs")
    .option('--run <id>', 'only this run (its id is printed by witness run)')
    .option('--latest', 'only the most recent run')
    .addOption(dbOption())
    .action(async (options: Record<string, unknown>) => {
      const out = typeof options.out === 'string' ? options.out : 'witness-report.html';
      const db = resolveDb(options, io.env);
      const filter = {
        campaign: typeof options.campaign === 'string' ? options.campaign : undefined,
        runId: typeof options.run === 'string' ? options.run : undefined,
      };
      let runs = await withMemory(db, (memory) => loadReportRuns(memory, filter));
      if (options.latest === true) runs = runs.slice(-1);
      if (runs.length === 0) {
        throw new UsageError(
          `no stored campaign run matches in ${db}; run \`witness run <campaign.yaml>\` first`,
        );
      }
      await writeFile(out, renderReportHtml(runs));
      const attempts = runs.reduce((sum, entry) => sum + entry.attempts.length, 0);
      io.err(`report of ${runs.length} run(s), ${attempts} attempt(s) written to ${out}\n`);
    });
}
