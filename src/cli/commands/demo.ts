import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { ReportRun } from '../../render/report-html.js';
import type { TableRow } from '../../render/summary-table.js';
import type { CliIo } from '../io.js';
import { dbOption, resolveDb, withMemory } from '../memory-option.js';
import { progressReporter } from '../progress.js';

export function registerDemo(program: Command, io: CliIo): void {
  program
    .command('demo')
    .description(
      'run the built-in campaign against the mock agent (vulnerable, guarded and refusing); no network, no keys',
    )
    .option('--report <file>', 'where to write the HTML report', 'witness-report.html')
    .option('--json', 'print { runs: [{ run, totals, attempts }] } as JSON instead of the table')
    .addOption(dbOption())
    .action(async (options: Record<string, unknown>) => {
      // Loaded when the command runs, not when the CLI starts: the campaign runner pulls in every
      // target (and the MCP SDK), which `witness --version` or `witness score` must not pay for.
      const [
        { demoCampaign },
        { MemoryAttemptRecorder },
        { renderReportHtml },
        { reportRunOf },
        { runCampaign },
        { renderAttemptTable, renderTotals },
        { MockAgentTarget },
        { DEMO_MODES },
      ] = await Promise.all([
        import('../../attacks/demo-campaign.js'),
        import('../../attacks/memory-recorder.js'),
        import('../../render/report-html.js'),
        import('../../render/report-run.js'),
        import('../../attacks/run-campaign.js'),
        import('../../render/summary-table.js'),
        import('../../targets/mock-agent-target.js'),
        import('../../attacks/demo-campaign.js'),
      ]);
      const report = typeof options.report === 'string' ? options.report : 'witness-report.html';
      const db = resolveDb(options, io.env);
      const runs: ReportRun[] = [];
      const rows: TableRow[] = [];
      const totals: string[] = [];
      const results: unknown[] = [];
      await withMemory(db, async (memory) => {
        for (const mode of DEMO_MODES) {
          const campaign = demoCampaign(mode);
          const progress = progressReporter(io, campaign.name);
          const result = await runCampaign({
            campaign,
            target: new MockAgentTarget({ mode }),
            recorder: new MemoryAttemptRecorder(memory),
            onProgress: (event) => progress.update(event),
            signal: io.signal,
          });
          progress.done();
          runs.push(reportRunOf(result.run, result.attempts));
          rows.push(...result.attempts.map((record) => ({ label: `mock ${mode}`, record })));
          totals.push(renderTotals(campaign.name, result.totals));
          results.push({ run: result.run, totals: result.totals, attempts: result.attempts });
        }
      });
      if (options.json === true) {
        io.out(`${JSON.stringify({ runs: results })}\n`);
      } else {
        io.out(`${renderAttemptTable(rows)}\n\n${totals.join('\n')}\n`);
        io.out(
          '\nThe vulnerable agent claims it only summarized; the guarded one does the work and ignores the injection; the refusing one does nothing. Every verdict, and every task, comes from reading each workspace afterwards.\n',
        );
      }
      await writeFile(report, renderReportHtml(runs));
      io.err(`stored in ${db}; report written to ${report} (witness report --db ${db} rebuilds it)\n`);
    });
}
