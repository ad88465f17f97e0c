import type { Command } from 'commander';
import type { CliIo } from '../io.js';
import { dbOption, resolveDb } from '../memory-option.js';

/** `witness runs list|show`: queued runs and, per attempt, queued / running / retried / done and who ran it. */
export function registerRuns(program: Command, io: CliIo): void {
  const runs = program.command('runs').description('queued runs and the state of their attempts');
  runs
    .command('list')
    .description('every queued run with its attempts counted by state')
    .addOption(dbOption())
    .option('--json', 'one JSON document per run')
    .action(async (options: Record<string, unknown>) => {
      await withQueue(resolveDb(options, io.env), async (db, status) => {
        for (const runId of await status.listQueuedRunIds(db)) {
          const run = await status.readRunStatus(db, runId);
          const counts = status.countStates(run.attempts);
          if (options.json === true) {
            io.out(
              `${JSON.stringify({ runId, campaign: run.campaign, submittedAt: run.submittedAt, cancelledAt: run.cancelledAt, counts: Object.fromEntries(counts) })}\n`,
            );
            continue;
          }
          const cancelled = run.cancelledAt === null ? '' : ' (cancelled)';
          io.out(
            `${runId}  ${run.campaign}${cancelled}  ${counts.map(([state, count]) => `${count} ${state}`).join(', ')}\n`,
          );
        }
      });
    });
  runs
    .command('show')
    .description(
      "one queued run: each attempt's state, tries, worker, lease (when it would be retried) and outcome",
    )
    .argument('<run>', 'the run id `witness run --queue` printed')
    .addOption(dbOption())
    .option('--json', 'the status as JSON')
    .action(async (runId: string, options: Record<string, unknown>) => {
      await withQueue(resolveDb(options, io.env), async (db, status) => {
        const run = await status.readRunStatus(db, runId);
        if (options.json === true) {
          io.out(`${JSON.stringify(run)}\n`);
          return;
        }
        io.out(`run ${run.runId}  campaign ${run.campaign}  submitted ${run.submittedAt}`);
        io.out(run.cancelledAt === null ? '\n' : `  cancelled ${run.cancelledAt}\n`);
        // A running attempt's lease: how long ago its worker renewed it, and when the attempt would be
        // back in the queue — if its worker is lost (lease, then a sweep), or stuck (its job expires).
        const rows = [
          ['ATTACK', 'ATTEMPT', 'STATE', 'TRIES', 'WORKER', 'LEASE', 'RETRIED', 'OUTCOME'],
          ...run.attempts.map((a) => [
            a.attack,
            String(a.attempt),
            a.state,
            String(a.tries),
            a.worker ?? '-',
            a.lease === null ? '-' : `renewed ${a.lease.renewedSecondsAgo}s ago`,
            a.lease === null
              ? '-'
              : `within ${Math.ceil(a.lease.backIfLostWithinSeconds)}s if its worker is lost${
                  a.lease.jobExpiresInSeconds === null
                    ? ''
                    : `, ${Math.ceil(a.lease.jobExpiresInSeconds)}s if it is stuck`
                }`,
            a.outcome ?? (a.error === null ? '-' : `- (${a.error})`),
          ]),
        ];
        const widths = rows[0]?.map((_, i) => Math.max(...rows.map((row) => (row[i] ?? '').length))) ?? [];
        for (const row of rows) {
          io.out(
            `${row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ')}\n`,
          );
        }
        io.out(
          `${status
            .countStates(run.attempts)
            .map(([state, count]) => `${count} ${state}`)
            .join(', ')}\n`,
        );
      });
    });
}

async function withQueue(
  url: string,
  work: (
    db: import('../../queue/queue-store.js').QueueDb,
    status: typeof import('../../queue/run-status.js'),
  ) => Promise<void>,
): Promise<void> {
  const { requirePostgres, openQueueDb } = await import('../../queue/queue-store.js');
  requirePostgres(url);
  const status = await import('../../queue/run-status.js');
  const queue = await openQueueDb(url, { max: 1 });
  try {
    await work(queue.db, status);
  } finally {
    await queue.close();
  }
}
