import type { CliIo } from '../io.js';
import { resolveDb, withMemory } from '../memory-option.js';
import { UsageError } from '../usage-error.js';

/**
 * The queued side of `witness run`: `--queue` (submit, print the run id, optionally `--wait`) and
 * `--cancel RUN`. Loaded only when one of those flags is given, so a local run loads nothing of it.
 */

export async function cancelQueuedRun(
  runId: string,
  options: Record<string, unknown>,
  io: CliIo,
): Promise<void> {
  const db = resolveDb(options, io.env);
  const { requirePostgres, openQueueDb } = await import('../../queue/queue-store.js');
  requirePostgres(db);
  const { startBoss } = await import('../../queue/boss.js');
  const { cancelRun } = await import('../../queue/run-status.js');
  const queue = await openQueueDb(db);
  const boss = await startBoss(db, { supervise: false });
  try {
    const cancelled = await cancelRun(queue.db, boss, runId);
    io.err(
      `run ${runId} cancelled: ${cancelled} waiting attempts will not start; running attempts stop at their next check\n`,
    );
  } finally {
    await boss.stop({ graceful: false, wait: true });
    await queue.close();
  }
}

export async function submitQueuedRun(
  file: string,
  options: Record<string, unknown>,
  io: CliIo,
): Promise<void> {
  const db = resolveDb(options, io.env);
  const { requirePostgres } = await import('../../queue/queue-store.js');
  requirePostgres(db);
  const [{ openCampaignSession }, { submitRun }] = await Promise.all([
    import('../../attacks/campaign-session.js'),
    import('../../queue/submit-run.js'),
  ]);
  // The attempts run on the workers' machines; a campaign that cannot work here is refused before it is
  // queued (workers are most often started from the same checkout, on the same kind of machine).
  const { loadCheckedCampaign } = await import('./run-preflight.js');
  const checked = await loadCheckedCampaign(file, { preflight: options.preflight !== false, db }, io);
  const session = await openCampaignSession(file, { hostEnv: io.env, memoryLocation: db, campaign: checked });
  const { campaign } = session;
  const graceSeconds =
    options.jobGrace === undefined ? undefined : readWhole('--job-grace', options.jobGrace);
  const submitted = await withMemory(db, (memory) =>
    submitRun({
      url: db,
      memory,
      campaignFile: file,
      campaign,
      target: session.target.identifier(),
      redactor: session.redactor,
      runId: typeof options.runId === 'string' ? options.runId : undefined,
      graceSeconds,
    }),
  );
  io.err(
    `queued run ${submitted.run.runId}: ${submitted.enqueued} of ${submitted.total} attempts enqueued now${
      submitted.enqueued < submitted.total
        ? ` (${submitted.total - submitted.enqueued} were already queued)`
        : ''
    }${
      submitted.retried > 0
        ? `; ${submitted.retried} attempts whose retries were used up get another try`
        : ''
    }; start workers with \`witness worker --db <same database>\`\n`,
  );
  const { lostAttemptWaitMs } = await import('../../queue/attempt-lease.js');
  io.err(
    `a lost worker's attempt is back in the queue at most ${lostAttemptWaitMs() / 1000} s after its last lease renewal; a worker alive but stuck keeps it until its job expires, ${submitted.expireSeconds} s after it started (attemptTimeoutMs + --job-grace)\n`,
  );
  io.out(`${submitted.run.runId}\n`);
  if (options.wait === true) await waitForRun(db, submitted.run.runId, campaign.name, options, io);
}

/** Follows the run until no attempt can change any more, then prints the table as a local run does. */
async function waitForRun(
  db: string,
  runId: string,
  name: string,
  options: Record<string, unknown>,
  io: CliIo,
): Promise<void> {
  const { openQueueDb } = await import('../../queue/queue-store.js');
  const { readRunStatus, countStates, FINAL_STATES } = await import('../../queue/run-status.js');
  const queue = await openQueueDb(db, { max: 1 });
  try {
    let last = '';
    for (;;) {
      io.signal.throwIfAborted();
      const status = await readRunStatus(queue.db, runId);
      const line = countStates(status.attempts)
        .map(([state, count]) => `${count} ${state}`)
        .join(', ');
      if (line !== last) io.err(`${name}: ${line}\n`);
      last = line;
      if (status.attempts.every((attempt) => FINAL_STATES.includes(attempt.state))) break;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  } finally {
    await queue.close();
  }
  const [{ renderAttemptTable, renderTotals }, { tallyAttempts }] = await Promise.all([
    import('../../render/summary-table.js'),
    import('../../attacks/outcome.js'),
  ]);
  const attempts = await withMemory(db, (memory) => memory.listAttempts(runId));
  const totals = tallyAttempts(attempts);
  if (options.json === true) {
    io.out(`${JSON.stringify({ runId, totals, attempts })}\n`);
    return;
  }
  io.out(`${renderAttemptTable(attempts.map((record) => ({ record })))}\n\n`);
  io.out(`${renderTotals(name, totals)}\n`);
}

function readWhole(flag: string, raw: unknown): number {
  const text = String(raw);
  if (!/^[0-9]+$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw new UsageError(`${flag} takes a whole number of seconds, got ${JSON.stringify(text)}`);
  }
  return Number(text);
}
