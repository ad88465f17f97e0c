import { rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { CompiledQuery, sql, type Transaction } from 'kysely';
import type PgBoss from 'pg-boss';
import { type Attack, attackExpectation, type Campaign } from '../attacks/campaign.js';
import { prepareCampaignContainment } from '../attacks/campaign-containment.js';
import { loadCampaignFile } from '../attacks/campaign-file.js';
import { type CampaignMemory, MemoryAttemptRecorder } from '../attacks/memory-recorder.js';
import { runAttempt } from '../attacks/run-attempt.js';
import type { SecretRedactor } from '../attacks/secret-redactor.js';
import { BundleMismatchError, InvalidOptionError } from '../errors.js';
import type { Memory } from '../memory/memory.js';
import { openMemory } from '../memory/open-memory.js';
import { storeAttackResult } from '../memory/store-records.js';
import type { Tables } from '../memory/tables.js';
import { type AttackResult, AttackResultSchema } from '../models/attack-result.js';
import { type CampaignRun, CampaignRunSchema } from '../models/campaign-run.js';
import { parseRecord } from '../models/record.js';
import { createTarget } from '../targets/create-target.js';
import type { Target } from '../targets/target.js';
import { type AttemptJob, AttemptJobSchema } from './attempt-job.js';
import { startBoss } from './boss.js';
import { BundleManifestSchema, materializeCampaignFiles } from './campaign-bundle.js';
import { ATTEMPT_QUEUE, openQueueDb, QUEUE_SCHEMA, type QueueConnection } from './queue-store.js';

/**
 * `witness worker`: takes attempt jobs of any run and executes each exactly as `witness run` does — the
 * same campaign loader, containment and target factory, the same {@link runAttempt} and recorder — after
 * materializing the run's campaign files (hash-checked) into a private directory.
 *
 * Exactly-once results. The attempt's attack result, its row's `done`, and the pg-boss completion of its
 * job are written in ONE transaction, which first locks the attempt row (`for update`): a second worker
 * that ran the same attempt (the first was thought lost) finds the row done and stores nothing. A worker
 * killed before that commit leaves its job active; pg-boss's maintenance (run by every worker) fails it
 * after `expireInSeconds` (the attempt timeout plus a grace) and it is retried. Evidence the killed
 * attempt stored before dying (its conversation, score, observations) stays in the memory unreferenced by
 * any result; only the committed attack result counts.
 *
 * Cancellation: a cancelled run's attempts are not started; a running one is aborted at its next check
 * (every `cancelCheckMs`) and marked cancelled.
 */

export interface WorkerOptions {
  url: string;
  concurrency?: number | undefined;
  env: Readonly<Record<string, string | undefined>>;
  /** Stops taking jobs; running attempts are aborted and their jobs handed back for retry. */
  signal?: AbortSignal | undefined;
  /** Defaults to hostname:pid. */
  workerId?: string | undefined;
  pollIntervalMs?: number | undefined;
  cancelCheckMs?: number | undefined;
  /** How often this worker's pg-boss expires jobs of lost workers (default 30 s). */
  maintenanceIntervalSeconds?: number | undefined;
  /** Stop after this many jobs were handled (tests, benchmarks); run until the signal otherwise. */
  maxJobs?: number | undefined;
  /** Stop when the queue has been empty this long (ms); run until the signal otherwise. */
  idleExitMs?: number | undefined;
  log?: ((line: string) => void) | undefined;
}

export interface WorkerSummary {
  workerId: string;
  done: number;
  duplicates: number;
  cancelled: number;
  refused: number;
  failed: number;
}

interface RunContext {
  run: CampaignRun;
  campaign: Campaign;
  target: Target;
  redactor: SecretRedactor;
  cancelled: () => Promise<boolean>;
}

type Settled = { ok: true; context: RunContext } | { ok: false; error: Error };

export function defaultWorkerId(): string {
  return `${hostname()}:${process.pid}`;
}

export async function runWorker(options: WorkerOptions): Promise<WorkerSummary> {
  const concurrency = options.concurrency ?? 1;
  if (!Number.isSafeInteger(concurrency) || concurrency <= 0) {
    throw new InvalidOptionError(`concurrency must be a positive integer, got ${String(concurrency)}`);
  }
  const workerId = options.workerId ?? defaultWorkerId();
  const log = options.log ?? (() => {});
  const pollMs = options.pollIntervalMs ?? 1000;
  const queue = await openQueueDb(options.url, { max: concurrency + 2 });
  const memory = await openMemory(options.url);
  const boss = await startBoss(options.url, {
    supervise: true,
    maintenanceIntervalSeconds: options.maintenanceIntervalSeconds ?? 30,
  });
  const summary: WorkerSummary = { workerId, done: 0, duplicates: 0, cancelled: 0, refused: 0, failed: 0 };
  const contexts = new Map<string, Promise<Settled>>();
  const directories: string[] = [];
  const stop = new AbortController();
  const onAbort = () => stop.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted) onAbort();
  let handled = 0;
  let idleSince = Date.now();

  const contextOf = (runId: string): Promise<Settled> => {
    let found = contexts.get(runId);
    if (found === undefined) {
      found = loadRunContext(queue, runId, options.env, options.url, directories).then(
        (context): Settled => ({ ok: true, context }),
        (error: Error): Settled => ({ ok: false, error }),
      );
      contexts.set(runId, found);
    }
    return found;
  };

  const slot = async (): Promise<void> => {
    while (!stop.signal.aborted) {
      if (options.maxJobs !== undefined && handled >= options.maxJobs) return;
      const [job] = await boss.fetch<unknown>(ATTEMPT_QUEUE, { batchSize: 1 });
      if (job === undefined) {
        if (options.idleExitMs !== undefined && Date.now() - idleSince >= options.idleExitMs) return;
        await sleep(pollMs, stop.signal);
        continue;
      }
      handled++;
      const result = await handleJob(job.id, job.data);
      summary[result]++;
      idleSince = Date.now();
    }
  };

  const handleJob = async (jobId: string, data: unknown): Promise<keyof Omit<WorkerSummary, 'workerId'>> => {
    const parsed = AttemptJobSchema.safeParse(data);
    if (!parsed.success) {
      await boss.fail(ATTEMPT_QUEUE, jobId, { message: 'the job is not a Witness attempt' });
      return 'failed';
    }
    const job = parsed.data;
    const label = `${job.runId} ${job.attack} #${job.attempt}`;
    const settled = await contextOf(job.runId);
    if (!settled.ok) {
      if (settled.error instanceof BundleMismatchError) {
        await finishWithout(queue, boss, job, jobId, 'refused', settled.error.message);
        log(`${workerId}: REFUSED ${label}: ${settled.error.message}\n`);
        return 'refused';
      }
      contexts.delete(job.runId);
      await boss.fail(ATTEMPT_QUEUE, jobId, { message: settled.error.message });
      log(`${workerId}: cannot prepare ${label}: ${settled.error.message}\n`);
      return 'failed';
    }
    const { context } = settled;
    const claim = await claimAttempt(queue, boss, job, jobId, workerId, await context.cancelled());
    if (claim !== 'claimed') {
      if (claim === 'cancelled') log(`${workerId}: ${label} not started: its run is cancelled\n`);
      return claim === 'cancelled' ? 'cancelled' : 'duplicates';
    }
    const attack = context.campaign.attacks.find((candidate) => candidate.id === job.attack) as Attack;
    const attemptAbort = new AbortController();
    const onStop = () => attemptAbort.abort(stop.signal.reason);
    stop.signal.addEventListener('abort', onStop, { once: true });
    const check = setInterval(() => {
      context.cancelled().then(
        (cancelled) => {
          if (cancelled) attemptAbort.abort(new RunCancelled());
        },
        () => {},
      );
    }, options.cancelCheckMs ?? 2000);
    let captured: AttackResult | undefined;
    try {
      const recorder = new MemoryAttemptRecorder(capturingMemory(memory, (result) => (captured = result)));
      const record = await runAttempt({
        campaign: context.campaign,
        target: context.target,
        recorder,
        run: context.run,
        attack,
        attempt: job.attempt,
        expectation: attackExpectation(attack),
        redactor: context.redactor,
        signal: attemptAbort.signal,
      });
      await recorder.recordAttempt(record, context.run);
      const stored = await completeWithResult(queue, boss, job, jobId, workerId, captured as AttackResult);
      log(`${workerId}: ${label} ${stored ? record.outcome : 'already stored by another worker'}\n`);
      return stored ? 'done' : 'duplicates';
    } catch (error) {
      if (attemptAbort.signal.reason instanceof RunCancelled) {
        await finishWithout(queue, boss, job, jobId, 'cancelled', 'the run was cancelled while it ran');
        log(`${workerId}: ${label} cancelled while running\n`);
        return 'cancelled';
      }
      // Stopped, or the memory failed: the job goes back for another try (pg-boss counts retries).
      await sql`update ${sql.raw(QUEUE_SCHEMA)}.attempts set state = 'queued', error = ${(error as Error).message}
                 where run_id = ${job.runId} and attack = ${job.attack} and attempt = ${job.attempt}
                   and state = 'running'`
        .execute(queue.db)
        .catch(() => {});
      await boss.fail(ATTEMPT_QUEUE, jobId, { message: (error as Error).message }).catch(() => {});
      log(`${workerId}: ${label} handed back: ${(error as Error).message}\n`);
      return 'failed';
    } finally {
      clearInterval(check);
      stop.signal.removeEventListener('abort', onStop);
    }
  };

  log(`${workerId}: taking attempts from ${memory.location.target} (concurrency ${concurrency})\n`);
  try {
    await Promise.all(Array.from({ length: concurrency }, slot));
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    await boss.stop({ graceful: false, wait: true }).catch(() => {});
    await memory.close();
    await queue.close();
    for (const dir of directories) await rm(dir, { recursive: true, force: true }).catch(() => {});
  }
  return summary;
}

class RunCancelled extends Error {
  constructor() {
    super('the run was cancelled');
    this.name = 'RunCancelled';
  }
}

/** The run's campaign, loaded from its materialized files exactly as `witness run` loads a file. */
async function loadRunContext(
  queue: QueueConnection,
  runId: string,
  env: WorkerOptions['env'],
  url: string,
  directories: string[],
): Promise<RunContext> {
  const { rows } = await sql<{ run_json: unknown; campaign_file: string; manifest: unknown }>`
    select run_json, campaign_file, manifest from ${sql.raw(QUEUE_SCHEMA)}.runs where run_id = ${runId}`.execute(
    queue.db,
  );
  const row = rows[0];
  if (row === undefined) throw new Error(`run ${runId} is not queued`);
  const run = CampaignRunSchema.parse(row.run_json);
  const dir = await materializeCampaignFiles(queue.db, BundleManifestSchema.parse(row.manifest));
  directories.push(dir);
  const campaign = await loadCampaignFile(join(dir, row.campaign_file));
  const { sandbox, redactor } = await prepareCampaignContainment(campaign, {
    hostEnv: env,
    memoryLocation: url,
  });
  const target = createTarget(campaign.target, { env, sandbox });
  const cancelled = async () => {
    const result = await sql<{ cancelled: boolean }>`
      select cancelled_at is not null as cancelled from ${sql.raw(QUEUE_SCHEMA)}.runs where run_id = ${runId}`.execute(
      queue.db,
    );
    return result.rows[0]?.cancelled === true;
  };
  return { run, campaign, target, redactor, cancelled };
}

/** pg-boss's statements run inside our transaction (its `db` option), so they commit or roll back with it. */
function bossDb(trx: Transaction<Tables>): PgBoss.Db {
  return {
    executeSql: async (text, values) => {
      const result = await trx.executeQuery(CompiledQuery.raw(text, values));
      return { rows: result.rows as unknown[] };
    },
  };
}

/** Marks the attempt running under this worker, unless it is already final or its run is cancelled. */
async function claimAttempt(
  queue: QueueConnection,
  boss: PgBoss,
  job: AttemptJob,
  jobId: string,
  workerId: string,
  runCancelled: boolean,
): Promise<'claimed' | 'cancelled' | 'final'> {
  return queue.db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ state: string }>`
      select state from ${sql.raw(QUEUE_SCHEMA)}.attempts
       where run_id = ${job.runId} and attack = ${job.attack} and attempt = ${job.attempt} for update`.execute(
      trx,
    );
    const state = rows[0]?.state;
    if (state === undefined || state === 'done' || state === 'cancelled' || state === 'refused') {
      await boss.complete(ATTEMPT_QUEUE, jobId, { alreadyFinal: state ?? 'unknown' }, { db: bossDb(trx) });
      return state === 'cancelled' ? 'cancelled' : 'final';
    }
    if (runCancelled) {
      await sql`update ${sql.raw(QUEUE_SCHEMA)}.attempts set state = 'cancelled', finished_at = now()
                 where run_id = ${job.runId} and attack = ${job.attack} and attempt = ${job.attempt}`.execute(
        trx,
      );
      await boss.complete(ATTEMPT_QUEUE, jobId, { cancelled: true }, { db: bossDb(trx) });
      return 'cancelled';
    }
    await sql`update ${sql.raw(QUEUE_SCHEMA)}.attempts
                 set state = 'running', tries = tries + 1, worker = ${workerId}, started_at = now(), error = null
               where run_id = ${job.runId} and attack = ${job.attack} and attempt = ${job.attempt}`.execute(
      trx,
    );
    return 'claimed';
  });
}

/**
 * The exactly-once step: result, row and job completion in one transaction, behind the row lock. Returns
 * false (and stores nothing) when another worker already stored this attempt's result.
 */
async function completeWithResult(
  queue: QueueConnection,
  boss: PgBoss,
  job: AttemptJob,
  jobId: string,
  workerId: string,
  result: AttackResult,
): Promise<boolean> {
  const record = parseRecord(AttackResultSchema, result, 'attack result');
  return queue.db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ state: string }>`
      select state from ${sql.raw(QUEUE_SCHEMA)}.attempts
       where run_id = ${job.runId} and attack = ${job.attack} and attempt = ${job.attempt} for update`.execute(
      trx,
    );
    const fresh = rows[0]?.state !== 'done';
    if (fresh) {
      await storeAttackResult(trx, record);
      await sql`update ${sql.raw(QUEUE_SCHEMA)}.attempts
                   set state = 'done', finished_at = now(), worker = ${workerId}, result_id = ${record.id},
                       outcome = ${record.outcome}, error = null
                 where run_id = ${job.runId} and attack = ${job.attack} and attempt = ${job.attempt}`.execute(
        trx,
      );
    }
    await boss.complete(ATTEMPT_QUEUE, jobId, { resultId: fresh ? record.id : null }, { db: bossDb(trx) });
    return fresh;
  });
}

/** Ends an attempt with no result (refused or cancelled) and completes its job, in one transaction. */
async function finishWithout(
  queue: QueueConnection,
  boss: PgBoss,
  job: AttemptJob,
  jobId: string,
  state: 'refused' | 'cancelled',
  reason: string,
): Promise<void> {
  await queue.db.transaction().execute(async (trx) => {
    await sql`update ${sql.raw(QUEUE_SCHEMA)}.attempts set state = ${state}, finished_at = now(), error = ${reason}
               where run_id = ${job.runId} and attack = ${job.attack} and attempt = ${job.attempt}
                 and state <> 'done'`.execute(trx);
    await boss.complete(ATTEMPT_QUEUE, jobId, { [state]: reason }, { db: bossDb(trx) });
  });
}

/** The memory as the recorder sees it, except that the attack result is handed to `capture`, not stored. */
function capturingMemory(memory: Memory, capture: (result: AttackResult) => void): CampaignMemory {
  return {
    resolveMessage: (...args) => memory.resolveMessage(...args),
    saveScore: (...args) => memory.saveScore(...args),
    createConversation: (...args) => memory.createConversation(...args),
    appendMessage: (...args) => memory.appendMessage(...args),
    saveRun: (...args) => memory.saveRun(...args),
    listRuns: (...args) => memory.listRuns(...args),
    listAttempts: (...args) => memory.listAttempts(...args),
    saveAttackResult: async (result) => {
      capture(result);
    },
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
