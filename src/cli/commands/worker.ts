import type { Command } from 'commander';
import { tuneAcquisitionThreadsForCampaign } from '../../attacks/campaign-threads.js';
import { tuneHeapForCampaign } from '../campaign-heap.js';
import type { CliIo } from '../io.js';
import { dbOption, resolveDb } from '../memory-option.js';
import { isProcessAlive } from '../process-alive.js';
import { UsageError } from '../usage-error.js';

export function registerWorker(program: Command, io: CliIo): void {
  program
    .command('worker')
    .description('take queued attempts (from `witness run --queue`) of any run and execute them here')
    .addOption(dbOption())
    .option('--concurrency <n>', 'attempts run at once by this worker (1)')
    .option('--maintenance-interval <seconds>', "how often this worker expires stuck workers' jobs (30)")
    .option(
      '--poll-interval <seconds>',
      'longest wait between two looks at an empty queue; a NOTIFY ends it early (1; raise it for large fleets)',
    )
    .option(
      '--idle-exit <seconds>',
      'exit once the queue has been empty this long (default: run until Ctrl-C)',
    )
    .action(async (options: Record<string, unknown>) => {
      const db = resolveDb(options, io.env);
      // A worker runs attempt after attempt, like `witness run`: collect sooner (see campaign-heap.ts).
      tuneHeapForCampaign(process.execArgv);
      tuneAcquisitionThreadsForCampaign();
      const { requirePostgres } = await import('../../queue/queue-store.js');
      requirePostgres(db);
      const { runWorker } = await import('../../queue/queue-worker.js');
      const summary = await runWorker({
        url: db,
        env: io.env,
        concurrency: positive('--concurrency', options.concurrency, 1),
        maintenanceIntervalSeconds: positive('--maintenance-interval', options.maintenanceInterval, 30),
        pollIntervalMs: positive('--poll-interval', options.pollInterval, 1) * 1000,
        idleExitMs:
          options.idleExit === undefined ? undefined : positive('--idle-exit', options.idleExit, 0) * 1000,
        signal: io.signal,
        // Campaign directories left by killed workers on this machine (nothing holds their lock, and their
        // pid is gone) are removed.
        sweep: { uid: process.getuid?.() ?? -1, isAlive: isProcessAlive },
        log: (line) => io.err(line),
      });
      io.err(
        `${summary.workerId}: ${summary.done} stored, ${summary.duplicates} already stored elsewhere, ${summary.cancelled} cancelled, ${summary.refused} refused, ${summary.failed} handed back, ${summary.lost} stopped (lease lost)\n`,
      );
    });
}

function positive(flag: string, raw: unknown, fallback: number): number {
  if (raw === undefined) return fallback;
  const text = String(raw);
  if (!/^[1-9][0-9]*$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw new UsageError(`${flag} takes a positive whole number, got ${JSON.stringify(text)}`);
  }
  return Number(text);
}
