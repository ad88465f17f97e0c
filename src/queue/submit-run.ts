import { basename, dirname, resolve } from 'node:path';
import { sql } from 'kysely';
import type PgBoss from 'pg-boss';
import type { Campaign } from '../attacks/campaign.js';
import { newCampaignRun } from '../attacks/campaign-run.js';
import { refusePlantedProof } from '../attacks/planted-proof.js';
import { InvalidOptionError } from '../errors.js';
import type { Memory } from '../memory/memory.js';
import { type CampaignRun, CampaignRunSchema } from '../models/campaign-run.js';
import type { ComponentIdentifier } from '../models/identifier.js';
import type { SecretRedactor } from '../text/secret-redactor.js';
import { type AttemptJob, attemptJobId, attemptKey, expireSecondsFor } from './attempt-job.js';
import { startBoss } from './boss.js';
import { collectCampaignFiles, storeCampaignFiles } from './campaign-bundle.js';
import { notifyAttemptsWaiting } from './job-wakeup.js';
import { ATTEMPT_QUEUE, BOSS_SCHEMA, openQueueDb, QUEUE_SCHEMA, type QueueDb } from './queue-store.js';

/**
 * `witness run --queue`: stores the run, its campaign files and one job per attempt, and returns at once.
 *
 * Idempotent: submitting the same run again (`runId`) adds nothing — attempt rows are keyed by
 * (run, attack, attempt) and jobs by an id derived from the same triple — so a submitter that crashed
 * half-way is simply run again. A resubmission must be of the same campaign (same name, same attacks).
 */

export interface SubmitRunOptions {
  url: string;
  memory: Pick<Memory, 'saveRun'>;
  /** The campaign file; every file under its directory travels with the run. */
  campaignFile: string;
  campaign: Campaign;
  target: ComponentIdentifier;
  redactor?: SecretRedactor | undefined;
  /** Resubmits (or names) this run instead of starting a new one. */
  runId?: string | undefined;
  /**
   * Seconds a job may stay active beyond the attempt timeout before it is retried (default 120): the cap
   * for a worker alive but stuck. A lost worker's attempts come back sooner, when their lease lapses.
   */
  graceSeconds?: number | undefined;
  /** Retries of an attempt whose worker vanished (default 3). */
  retryLimit?: number | undefined;
}

export interface SubmittedRun {
  run: CampaignRun;
  /** Attempts enqueued by this call; 0 when the run was already queued. */
  enqueued: number;
  /** Attempts whose retries were used up (job failed, no result) given another try by this call. */
  retried: number;
  total: number;
  /** Seconds a job may stay active before pg-boss expires it (the cap for a worker alive but stuck). */
  expireSeconds: number;
}

export const DEFAULT_GRACE_SECONDS = 120;

/**
 * A resubmission (`--run-id`) finishes the run: an attempt that has no result and whose job pg-boss gave
 * up on (its retries used up: the worker kept being lost, or could not prepare the run) goes back to the
 * queue with one more try (pg-boss's `retry`). Refused and cancelled attempts stay as they are: a refused
 * bundle is refused again, and a cancelled run stays cancelled.
 */
async function retryFailedAttempts(db: QueueDb, boss: PgBoss, runId: string): Promise<number> {
  const { rows } = await sql<{ job_id: string }>`
    select a.job_id from ${sql.raw(QUEUE_SCHEMA)}.attempts a
      join ${sql.raw(BOSS_SCHEMA)}.job j on j.name = ${ATTEMPT_QUEUE} and j.id = a.job_id
     where a.run_id = ${runId} and a.state in ('queued', 'running') and j.state = 'failed'`.execute(db);
  const ids = rows.map((row) => row.job_id);
  let retried = 0;
  for (let i = 0; i < ids.length; i += 500) {
    const batch = ids.slice(i, i + 500);
    await sql`update ${sql.raw(QUEUE_SCHEMA)}.attempts set state = 'queued', lease = null
               where run_id = ${runId} and job_id = any(${batch}::uuid[]) and state = 'running'`.execute(db);
    await boss.retry(ATTEMPT_QUEUE, batch);
    retried += batch.length;
  }
  return retried;
}

/**
 * Stores the run unless it is already stored, and returns the stored one: a resubmission keeps the run as
 * first stored (its start time), so saving it again is a no-op. A run id already queued with another
 * campaign is refused.
 */
async function storeRunOnce(
  db: QueueDb,
  candidate: CampaignRun,
  campaignFile: string,
  manifest: unknown,
  expireSeconds: number,
): Promise<CampaignRun> {
  await sql`insert into ${sql.raw(QUEUE_SCHEMA)}.runs (run_id, run_json, campaign_file, manifest, expire_seconds)
            values (${candidate.runId}, ${JSON.stringify(candidate)}, ${campaignFile},
                    ${JSON.stringify(manifest)}, ${expireSeconds})
            on conflict (run_id) do nothing`.execute(db);
  const { rows } = await sql<{ run_json: unknown }>`
    select run_json from ${sql.raw(QUEUE_SCHEMA)}.runs where run_id = ${candidate.runId}`.execute(db);
  const run = CampaignRunSchema.parse(rows[0]?.run_json);
  if (
    JSON.stringify(run.attacks) !== JSON.stringify(candidate.attacks) ||
    run.campaign !== candidate.campaign
  ) {
    throw new InvalidOptionError(
      `run ${run.runId} is already queued with a different campaign (${run.campaign}); resubmit it from the same campaign file, or leave out --run-id to start a new run`,
    );
  }
  return run;
}

/** One attempts row per attempt not yet recorded; how many were new. */
async function recordAttempts(db: QueueDb, jobs: readonly AttemptJob[]): Promise<number> {
  let enqueued = 0;
  for (const [seq, job] of jobs.entries()) {
    const jobId = attemptJobId(job);
    const inserted =
      await sql`insert into ${sql.raw(QUEUE_SCHEMA)}.attempts (run_id, attack, attempt, seq, job_id)
              values (${job.runId}, ${job.attack}, ${job.attempt}, ${seq}, ${jobId})
              on conflict do nothing`.execute(db);
    if (Number(inserted.numAffectedRows ?? 0n) > 0) enqueued++;
  }
  return enqueued;
}

/**
 * Only attempts that can still run get a job: an earlier submission's finished attempts are left alone
 * even after pg-boss archived their jobs. Job ids are derived from the attempt, so a job still in the
 * queue (inserted by an earlier submission) is not inserted twice.
 */
async function queueRunnableJobs(
  db: QueueDb,
  boss: PgBoss,
  runId: string,
  jobs: readonly AttemptJob[],
  limits: { expireInSeconds: number; retryLimit: number },
): Promise<void> {
  const { rows: open } = await sql<{ attack: string; attempt: number }>`
    select attack, attempt from ${sql.raw(QUEUE_SCHEMA)}.attempts
     where run_id = ${runId} and state in ('queued', 'running')`.execute(db);
  const waiting = new Set(open.map((row) => attemptKey({ runId, ...row })));
  const runnable = jobs.filter((job) => waiting.has(attemptKey(job)));
  for (let i = 0; i < runnable.length; i += 500) {
    await boss.insert(
      runnable.slice(i, i + 500).map((job) => ({
        id: attemptJobId(job),
        name: ATTEMPT_QUEUE,
        data: job,
        singletonKey: attemptKey(job),
        ...limits,
      })),
    );
  }
}

export async function submitRun(options: SubmitRunOptions): Promise<SubmittedRun> {
  const { campaign } = options;
  const grace = options.graceSeconds ?? DEFAULT_GRACE_SECONDS;
  if (!Number.isSafeInteger(grace) || grace < 0) {
    throw new InvalidOptionError(`the job grace must be a whole number of seconds, got ${String(grace)}`);
  }
  // Bait is not proof (SPEC §12): a campaign a local run refuses is refused here, before anything is stored.
  await refusePlantedProof(campaign);
  const files = await collectCampaignFiles(dirname(resolve(options.campaignFile)));
  const candidate = newCampaignRun({
    campaign,
    target: options.target,
    runId: options.runId,
    redactor: options.redactor,
  });
  const queue = await openQueueDb(options.url);
  const boss = await startBoss(options.url, { supervise: false, retryLimit: options.retryLimit });
  try {
    const manifest = await storeCampaignFiles(queue.db, files);
    const expireSeconds = expireSecondsFor(campaign.attemptTimeoutMs, grace);
    const run = await storeRunOnce(
      queue.db,
      candidate,
      basename(options.campaignFile),
      manifest,
      expireSeconds,
    );
    await options.memory.saveRun(run);
    const jobs = run.attacks.flatMap((attack) =>
      Array.from({ length: attack.attempts }, (_, i) => ({
        runId: run.runId,
        attack: attack.id,
        attempt: i + 1,
      })),
    );
    const enqueued = await recordAttempts(queue.db, jobs);
    await queueRunnableJobs(queue.db, boss, run.runId, jobs, {
      expireInSeconds: expireSeconds,
      retryLimit: options.retryLimit ?? 3,
    });
    const retried = await retryFailedAttempts(queue.db, boss, run.runId);
    // Idle workers fetch now instead of at their next poll.
    await notifyAttemptsWaiting(queue.db);
    return { run, enqueued, retried, total: jobs.length, expireSeconds };
  } finally {
    await boss.stop({ graceful: false, wait: true });
    await queue.close();
  }
}
