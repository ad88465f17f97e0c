import { tmpdir } from 'node:os';
import type { Command } from 'commander';
import type { CliIo } from '../io.js';
import { isProcessAlive } from '../process-alive.js';

/** `witness clean`: removes the run directories (workspaces, homes) of runs that were killed. */
export function registerClean(program: Command, io: CliIo): void {
  program
    .command('clean')
    .description('remove the workspaces left behind by killed runs (run directories whose owner is gone)')
    .option('--dir <path>', 'where run directories are created (default: the system temp directory)')
    .option('--dry-run', 'list what would be removed, remove nothing')
    .action(async (options: { dir?: string; dryRun?: boolean }) => {
      const { cleanLeftoverRuns, findLeftoverRuns } = await import('../../attacks/leftover-runs.js');
      const runs = findLeftoverRuns({
        parent: options.dir ?? tmpdir(),
        uid: process.getuid?.() ?? -1,
        isAlive: isProcessAlive,
      });
      for (const run of runs.filter((candidate) => candidate.inUse)) {
        io.err(`in use by process ${run.pid}, left: ${run.path}\n`);
      }
      if (options.dryRun === true) {
        for (const run of runs.filter((candidate) => !candidate.inUse)) io.out(`would remove ${run.path}\n`);
        return;
      }
      for (const { path, report } of cleanLeftoverRuns(runs)) {
        if (report.removed) io.out(`removed ${path}\n`);
        else {
          io.out(`could not fully remove ${path}\n`);
          for (const failure of report.failures) io.err(`  ${failure.path}: ${failure.reason}\n`);
          if (report.unlistedFailures > 0) io.err(`  … and ${report.unlistedFailures} more\n`);
        }
      }
    });
}
