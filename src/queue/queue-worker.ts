import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { chainIdOf, runChain } from '../attacks/attack-chain.js';
import type { AttackerModel } from '../attacks/attacker-model.js';
import type { Attacker } from '../attacks/campaign.js';
import { type Attack, attackExpectation, type Campaign } from '../attacks/campaign.js';
import { openCampaignSession } from '../attacks/campaign-session.js';
import { MemoryAttemptRecorder, withAttackResultSaver } from '../attacks/memory-recorder.js';
import { runAttempt } from '../attacks/run-attempt.js';
import { createRunDirectory, type RunDirectory } from '../attacks/workspace.js';
import { BundleMismatchError, InvalidOptionError, NotFoundError } from '../errors.js';
import { openMemory } from '../memory/open-memory.js';
import type { AttackResult } from '../models/attack-result.js';
import type { AttemptRecord } from '../models/attempt-record.js';
import { type CampaignRun, CampaignRunSchema } from '../models/campaign-run.js';
import type { Target } from '../targets/target.js';
import type { SecretRedactor } from '../text/secret-redactor.js';
import type { AttemptJob } from './attempt-job.js';
import { DEFAULT_LEASE, LeaseKeeper, LeaseLost, type LeaseTiming, RunCancelled } from './attempt-lease.js';
import {
  completeWithResult,
  finishWithout,
  handBack,
  storeRoundResult,
  type Taken,
  takeNextAttempt,
} from './attempt-transactions.js';
import { startBoss } from './boss.js';
import { BundleManifestSchema, materializeCampaignFiles } from './campaign-bundle.js';
import { createJobWakeup, notifyAttemptsWaiting } from './job-wakeup.js';
import { openQueueDb, QUEUE_SCHEMA, type QueueConnection } from './queue-store.js';
import { type SweptDirectory, sweepWorkerDirectories, type WorkerDirectory } from './worker-directories.js';

/**
 * `witness worker`: takes attempt jobs of any run and executes each exactly as `witness run` does — the
 * same campaign loader, containment and target factory, the same {@link runAttempt} and recorder — after
 * materializing the run's campaign files (hash-checked) into a private directory, once per run.
 *
 * Exactly-once results. The attempt's attack result, its row's `done`, and the pg-boss completion of its
 * job are written in ONE transaction, which first locks the attempt row (`for update`) and requires the
 * lease this worker took with the attempt: a worker whose lease lapsed or was replaced stores nothing.
 * A worker killed before that commit stops renewing its leases; any worker's sweep returns its attempts
 * to the queue once they lapse (attempt-lease.ts), and another worker takes them. Evidence the killed
 * attempt stored before dying (its conversation, score, observations) stays in the memory unreferenced by
 * any result; only the committed attack result counts.
 *
 * Per attempt the queue costs two transactions (take: fetch + claim; complete: result + row + job); per
 * worker, one lease renewal every few seconds for all its attempts, and one sweep. An idle worker is
 * woken by NOTIFY rather than its poll (see job-wakeup.ts).
 *
 * Cancellation: a cancelled run's attempts are not started; a running one is stopped when a renewal of
 * its lease reads the cancellation (every `renewEveryMs`), and marked cancelled.
 */

export interface WorkerOptions {
  url: string;
  concurrency?: number | undefined;
  env: Readonly<Record<string, string | undefined>>;
  /** Stops taking jobs; running attempts are aborted and their jobs handed back for retry. */
  signal?: AbortSignal | undefined;
  /** Defaults to hostname:pid. */
  workerId?: string | undefined;
  /** Longest wait between two looks at an empty queue (default 1000 ms; a NOTIFY ends the wait early). */
  pollIntervalMs?: number | undefined;
  /** Wake on NOTIFY (default true); false leaves only polling (benchmarks compare the two). */
  listen?: boolean | undefined;
  /** The lease's timing (attempt-lease.ts); tests shorten it. */
  lease?: Partial<LeaseTiming> | undefined;
  /** How often this worker's pg-boss expires jobs of lost workers (default 30 s). */
  maintenanceIntervalSeconds?: number | undefined;
  /** Stop after this many jobs were handled (tests, benchmarks); run until the signal otherwise. */
  maxJobs?: number | undefined;
  /** Stop when the queue has been empty this long (ms); run until the signal otherwise. */
  idleExitMs?: number | undefined;
  /** Where the run's campaign files and attempt workspaces go (default: the system temp directory). */
  workDirectory?: string | undefined;
  /** This process's id, written into the names of its directories (default: the current process). */
  ownerPid?: number | undefined;
  /**
   * Removes, at start, the campaign directories of workers that were killed (no process holds their lock
   * or has their pid); see worker-directories.ts. Left out, nothing is swept.
   */
  sweep?: { uid: number; isAlive: (pid: number) => boolean } | undefined;
  log?: ((line: string) => void) | undefined;
  /** Called once per attempt this worker took, with where its time went (benchmarks, profiling). */
  onJobTiming?: ((timing: JobTiming) => void) | undefined;
}

/**
 * Where one taken attempt's time went on this worker, in milliseconds: `takeMs` the transaction that
 * fetched and claimed it (not the idle waits before), `prepareMs` loading the run's campaign (0 once
 * cached), `attemptMs` the attempt itself (what in-process scheduling spends too), `completeMs` the
 * transaction storing its result. Everything but `attemptMs` is the queue's cost.
 */
export interface JobTiming {
  job: AttemptJob;
  result: WorkerResult;
  takeMs: number;
  prepareMs: number;
  attemptMs: number;
  completeMs: number;
}

export interface WorkerSummary {
  workerId: string;
  done: number;
  duplicates: number;
  cancelled: number;
  refused: number;
  failed: number;
  /** Attempts stopped because their lease was lost (another worker runs them); nothing was stored. */
  lost: number;
}
type WorkerResult = keyof Omit<WorkerSummary, 'workerId'>;

interface RunContext {
  run: CampaignRun;
  campaign: Campaign;
  target: Target;
  redactor: SecretRedactor;
  /** The attacker model of an adaptive attack (its key read from this worker's environment). */
  attackers: (attacker: Attacker) => AttackerModel;
  /** Holds every attempt's workspace and home on this worker, as in a local run (one per run). */
  runDirectory: RunDirectory;
}

type Settled = { ok: true; context: RunContext } | { ok: false; error: Error };

/** How long a slot waits before taking again when the attempt it fetched was being stored by another. */
const BUSY_RETRY_MS = 50;

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
  const workDirectory = options.workDirectory ?? tmpdir();
  const ownerPid = options.ownerPid ?? process.pid;
  if (options.sweep !== undefined) {
    for (const swept of sweepWorkerDirectories({ parent: workDirectory, ...options.sweep })) {
      log(describeSwept(workerId, swept));
    }
  }
  const lease: LeaseTiming = { ...DEFAULT_LEASE, ...options.lease };
  const connections = await openWorkerConnections(options, concurrency, pollMs);
  const settings = { workerId, log, pollMs, lease, workDirectory, ownerPid };
  return new QueueWorker(options, settings, connections).run(concurrency);
}

type WorkerConnections = Awaited<ReturnType<typeof openWorkerConnections>>;

interface WorkerSettings {
  workerId: string;
  log: (line: string) => void;
  pollMs: number;
  lease: LeaseTiming;
  workDirectory: string;
  ownerPid: number;
}

type HeldAttempt = { job: AttemptJob; jobId: string; lease: string };
type Timing = Omit<JobTiming, 'job' | 'result'>;

/**
 * One worker: `concurrency` slots that take attempts and run them, sharing the worker's connections, its
 * lease keeper, the runs it prepared (one campaign directory and run directory per run) and its counts.
 */
class QueueWorker {
  readonly #options: WorkerOptions;
  readonly #workerId: string;
  readonly #log: (line: string) => void;
  readonly #settings: WorkerSettings;
  readonly #connections: WorkerConnections;
  readonly #keeper: LeaseKeeper;
  readonly #summary: WorkerSummary;
  readonly #contexts = new Map<string, Promise<Settled>>();
  readonly #directories: WorkerDirectory[] = [];
  readonly #runDirectories: RunDirectory[] = [];
  readonly #stop = new AbortController();
  readonly #onAbort = () => this.#stop.abort(this.#options.signal?.reason);
  #handled = 0;
  #idleSince = Date.now();

  constructor(options: WorkerOptions, settings: WorkerSettings, connections: WorkerConnections) {
    this.#options = options;
    this.#settings = settings;
    this.#workerId = settings.workerId;
    this.#log = settings.log;
    this.#connections = connections;
    this.#keeper = new LeaseKeeper(connections.queue.db, connections.boss, settings.lease, (line) =>
      this.#log(`${this.#workerId}: ${line}`),
    );
    this.#summary = {
      workerId: settings.workerId,
      done: 0,
      duplicates: 0,
      cancelled: 0,
      refused: 0,
      failed: 0,
      lost: 0,
    };
    options.signal?.addEventListener('abort', this.#onAbort, { once: true });
    if (options.signal?.aborted) this.#onAbort();
  }

  async run(concurrency: number): Promise<WorkerSummary> {
    const { memory, wakeup } = this.#connections;
    this.#log(
      `${this.#workerId}: taking attempts from ${memory.location.target} (concurrency ${concurrency}${
        wakeup.listening() ? ', woken by NOTIFY' : `, polling every ${this.#settings.pollMs} ms`
      })\n`,
    );
    this.#keeper.start();
    // A worker starting after a crash need not wait a sweep interval for what it (or another) left.
    void this.#keeper.sweep();
    try {
      // A slot that fails stops the others (their attempts are handed back), and every slot settles before
      // the run directories and campaign files go: none is still in an attempt.
      const settled = await Promise.allSettled(
        Array.from({ length: concurrency }, () =>
          this.#slot().catch((error: unknown) => {
            this.#stop.abort(error);
            throw error;
          }),
        ),
      );
      const failed = settled.find(
        (outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected',
      );
      if (failed !== undefined) throw failed.reason;
    } finally {
      await this.#close();
    }
    return this.#summary;
  }

  async #close(): Promise<void> {
    const { queue, memory, boss, wakeup } = this.#connections;
    this.#options.signal?.removeEventListener('abort', this.#onAbort);
    this.#keeper.stop();
    await wakeup.close();
    await boss.stop({ graceful: false, wait: true }).catch(() => {});
    await memory.close();
    await queue.close();
    for (const runDirectory of this.#runDirectories) runDirectory.dispose();
    for (const directory of this.#directories) await directory.remove().catch(() => {});
  }

  /** The run's prepared context, loaded once per run (a failed load is kept until it is handed back). */
  #contextOf(runId: string): Promise<Settled> {
    let found = this.#contexts.get(runId);
    if (found === undefined) {
      const { workDirectory, ownerPid } = this.#settings;
      const where = { env: this.#options.env, url: this.#options.url, workDirectory, ownerPid };
      found = loadRunContext(
        this.#connections.queue,
        runId,
        where,
        this.#directories,
        this.#runDirectories,
      ).then(
        (context): Settled => ({ ok: true, context }),
        (error: Error): Settled => ({ ok: false, error }),
      );
      this.#contexts.set(runId, found);
    }
    return found;
  }

  /** One slot: takes an attempt, runs it, and again, until stopped, `maxJobs` or `idleExitMs`. */
  async #slot(): Promise<void> {
    const { queue, boss, wakeup } = this.#connections;
    const { pollMs, lease } = this.#settings;
    const stop = this.#stop.signal;
    while (!stop.aborted) {
      if (this.#options.maxJobs !== undefined && this.#handled >= this.#options.maxJobs) return;
      const since = wakeup.generation();
      const takeStarted = performance.now();
      let taken: Taken | undefined;
      try {
        taken = await takeNextAttempt(queue.db, boss, this.#workerId, lease.lapseMs);
      } catch (error) {
        // The database is unreachable or failed: nothing was taken; look again after a poll.
        this.#log(`${this.#workerId}: cannot take an attempt: ${(error as Error).message}\n`);
        await wakeup.wait(pollMs, stop);
        continue;
      }
      if (taken === undefined) {
        const { idleExitMs } = this.#options;
        if (idleExitMs !== undefined && Date.now() - this.#idleSince >= idleExitMs) return;
        await wakeup.wait(pollMs, stop, since);
        continue;
      }
      if (taken.kind === 'busy') {
        await wakeup.wait(BUSY_RETRY_MS, stop);
        continue;
      }
      this.#handled++;
      const timing = { takeMs: performance.now() - takeStarted, prepareMs: 0, attemptMs: 0, completeMs: 0 };
      const result = await this.#handleTaken(taken, timing);
      this.#summary[result]++;
      if (taken.kind !== 'foreign') this.#options.onJobTiming?.({ job: taken.job, result, ...timing });
      this.#idleSince = Date.now();
    }
  }

  async #handleTaken(taken: Exclude<Taken, { kind: 'busy' }>, timing: Timing): Promise<WorkerResult> {
    if (taken.kind === 'foreign') return 'failed';
    const { job, jobId } = taken;
    const label = `${job.runId} ${job.attack} #${job.attempt}`;
    if (taken.kind === 'final') return 'duplicates';
    if (taken.kind === 'cancelled') {
      this.#log(`${this.#workerId}: ${label} not started: its run is cancelled\n`);
      return 'cancelled';
    }
    const held = { job, jobId, lease: taken.lease };
    // Renewed from now on, through preparing the run too; the signal stops the attempt when the lease is
    // lost or the run cancelled.
    const attemptAbort = this.#keeper.hold(job, taken.lease);
    try {
      return await this.#runHeld(held, label, attemptAbort, timing);
    } finally {
      this.#keeper.release(taken.lease);
    }
  }

  /** The job goes back for another try (pg-boss counts retries), and waiting workers are told. */
  async #giveBack(held: HeldAttempt, reason: string, what: string): Promise<WorkerResult> {
    const { queue, boss } = this.#connections;
    await handBack(queue.db, boss, held, reason);
    await notifyAttemptsWaiting(queue.db).catch(() => {});
    this.#log(`${this.#workerId}: ${what}: ${reason}\n`);
    return 'failed';
  }

  /** Stopped by the lease keeper: the run was cancelled, or the attempt is another worker's now. */
  async #stopped(held: HeldAttempt, label: string, reason: unknown): Promise<WorkerResult | undefined> {
    if (reason instanceof RunCancelled) {
      const { queue, boss } = this.#connections;
      await finishWithout(queue.db, boss, held, 'cancelled', 'the run was cancelled while it ran');
      this.#log(`${this.#workerId}: ${label} cancelled while running\n`);
      return 'cancelled';
    }
    if (reason instanceof LeaseLost) {
      this.#log(`${this.#workerId}: ${label} stopped, nothing stored: ${reason.message}\n`);
      return 'lost';
    }
    return undefined;
  }

  /** Prepares the attempt's run (once per run), then runs the attempt unless it was stopped meanwhile. */
  async #runHeld(
    held: HeldAttempt,
    label: string,
    attemptAbort: AbortController,
    timing: Timing,
  ): Promise<WorkerResult> {
    const { job } = held;
    const started = performance.now();
    const settled = await this.#contextOf(job.runId);
    timing.prepareMs = performance.now() - started;
    if (!settled.ok) {
      if (settled.error instanceof BundleMismatchError) {
        const { queue, boss } = this.#connections;
        await finishWithout(queue.db, boss, held, 'refused', settled.error.message);
        this.#log(`${this.#workerId}: REFUSED ${label}: ${settled.error.message}\n`);
        return 'refused';
      }
      this.#contexts.delete(job.runId);
      return this.#giveBack(held, settled.error.message, `cannot prepare ${label}`);
    }
    if (attemptAbort.signal.aborted) {
      const result = await this.#stopped(held, label, attemptAbort.signal.reason);
      if (result !== undefined) return result;
    }
    if (this.#stop.signal.aborted) {
      // Stopped while the run was being prepared: the abort listener below would never fire for a signal
      // that has already fired, and the attempt would run to its end after the worker was told to stop.
      return this.#giveBack(held, 'the worker stopped before the attempt began', `${label} handed back`);
    }
    return this.#runAndComplete(held, label, settled.context, attemptAbort, timing);
  }

  /**
   * Runs the attempt and stores its result with the job's completion, in one transaction that requires
   * this worker's lease; a stop, a lost lease or a failure is handled as the keeper would.
   */
  async #runAndComplete(
    held: HeldAttempt,
    label: string,
    context: RunContext,
    attemptAbort: AbortController,
    timing: Timing,
  ): Promise<WorkerResult> {
    const { job } = held;
    const stop = this.#stop.signal;
    const attack = context.campaign.attacks.find((candidate) => candidate.id === job.attack) as Attack;
    const onStop = () => attemptAbort.abort(stop.reason);
    stop.addEventListener('abort', onStop, { once: true });
    try {
      let started = performance.now();
      const { record, result } = await this.#execute(held, context, attack, attemptAbort.signal);
      timing.attemptMs = performance.now() - started;
      started = performance.now();
      this.#keeper.completing(held.lease);
      const { queue, boss } = this.#connections;
      const stored = await completeWithResult(queue.db, boss, held, this.#workerId, result);
      timing.completeMs = performance.now() - started;
      if (!stored) {
        this.#log(`${this.#workerId}: ${label} not stored: its lease was lost (another worker runs it)\n`);
        return 'lost';
      }
      this.#log(`${this.#workerId}: ${label} ${record.outcome}\n`);
      return 'done';
    } catch (error) {
      // A chain's round found its lease gone (LeaseLost) the same way the keeper would have.
      const result = await this.#stopped(
        held,
        label,
        attemptAbort.signal.aborted ? attemptAbort.signal.reason : error,
      );
      if (result !== undefined) return result;
      // Stopped, or the memory failed: the job goes back for another try (pg-boss counts retries).
      return this.#giveBack(held, (error as Error).message, `${label} handed back`);
    } finally {
      stop.removeEventListener('abort', onStop);
    }
  }

  /**
   * Runs the attempt as a local run does, storing its record; an adaptive attack's chain is one job
   * (SPEC §15): its rounds run here in order, each stored as it ends; its last round is stored with the
   * job's completion. A retried job resumes after the rounds a lost worker stored. The last record, and
   * the attack result the recorder made of it.
   */
  async #execute(
    held: HeldAttempt,
    context: RunContext,
    attack: Attack,
    signal: AbortSignal,
  ): Promise<{ record: AttemptRecord; result: AttackResult }> {
    const { job } = held;
    const { memory, queue } = this.#connections;
    let captured: AttackResult | undefined;
    const recorder = new MemoryAttemptRecorder(
      withAttackResultSaver(memory, async (result) => {
        captured = result;
      }),
    );
    const attemptContext = {
      campaign: context.campaign,
      target: context.target,
      recorder,
      run: context.run,
      attack,
      attempt: job.attempt,
      expectation: attackExpectation(attack),
      runDirectory: context.runDirectory,
      redactor: context.redactor,
      signal,
    };
    let record: AttemptRecord | undefined;
    if (attack.attacker === undefined) {
      record = await runAttempt(attemptContext);
      await recorder.recordAttempt(record, context.run);
    } else {
      const chain = chainIdOf(job.runId, attack.id, job.attempt);
      const stored = (await memory.listAttempts(job.runId)).filter((entry) => entry.chain === chain);
      await runChain({
        context: attemptContext,
        attacker: context.attackers(attack.attacker),
        resume: stored,
        onRound: async (round, last) => {
          await recorder.recordAttempt(round, context.run);
          if (last) {
            record = round;
            return;
          }
          const kept = await storeRoundResult(queue.db, held, captured as AttackResult);
          if (!kept) throw new LeaseLost('another worker took this attempt over');
        },
      });
      if (record === undefined) throw new Error('the chain ended without a last round: a bug');
    }
    return { record, result: captured as AttackResult };
  }
}

/**
 * The worker's queue, memory, pg-boss and wake-up connections, opened in turn. One that fails closes every
 * one opened before it, then throws: a worker that cannot start must exit with its error, not stay alive
 * holding connections and timers while it never takes an attempt (seen in CI: three workers starting
 * together on a fresh database, one failed by a deadlock in pg-boss's queue creation; boss.ts).
 */
async function openWorkerConnections(options: WorkerOptions, concurrency: number, pollMs: number) {
  const queue = await openQueueDb(options.url, { max: concurrency + 2 });
  let memory: Awaited<ReturnType<typeof openMemory>> | undefined;
  let boss: Awaited<ReturnType<typeof startBoss>> | undefined;
  let wakeup: ReturnType<typeof createJobWakeup> | undefined;
  try {
    memory = await openMemory(options.url);
    boss = await startBoss(options.url, {
      supervise: true,
      maintenanceIntervalSeconds: options.maintenanceIntervalSeconds ?? 30,
    });
    wakeup = createJobWakeup(options.url, { reopenAfterMs: pollMs, enabled: options.listen !== false });
    await wakeup.start();
    return { queue, memory, boss, wakeup };
  } catch (error) {
    await wakeup?.close().catch(() => {});
    await boss?.stop({ graceful: false, wait: true }).catch(() => {});
    await memory?.close().catch(() => {});
    await queue.close().catch(() => {});
    throw error;
  }
}

function describeSwept(workerId: string, swept: SweptDirectory): string {
  return swept.report.removed
    ? `${workerId}: removed ${swept.path}, left by worker process ${swept.pid}, which is gone (nothing held its lock)\n`
    : `${workerId}: could not fully remove ${swept.path} (left by worker process ${swept.pid}): ${
        swept.report.failures[0]?.reason ?? 'unknown reason'
      }\n`;
}

/** The run's campaign, loaded from its materialized files exactly as `witness run` loads a file. */
async function loadRunContext(
  queue: QueueConnection,
  runId: string,
  where: {
    env: WorkerOptions['env'];
    url: string;
    workDirectory: string;
    ownerPid: number;
  },
  directories: WorkerDirectory[],
  runDirectories: RunDirectory[],
): Promise<RunContext> {
  const { rows } = await sql<{ run_json: unknown; campaign_file: string; manifest: unknown }>`
    select run_json, campaign_file, manifest from ${sql.raw(QUEUE_SCHEMA)}.runs where run_id = ${runId}`.execute(
    queue.db,
  );
  const row = rows[0];
  if (row === undefined)
    throw new NotFoundError(`run ${runId} is not queued (submit it with witness run --queue)`);
  const run = CampaignRunSchema.parse(row.run_json);
  const directory = await materializeCampaignFiles(
    queue.db,
    BundleManifestSchema.parse(row.manifest),
    where.workDirectory,
    where.ownerPid,
  );
  directories.push(directory);
  const campaignFile = join(directory.path, row.campaign_file);
  // The same session a local run opens: campaign, containment and target (with the redactor).
  const { campaign, target, redactor, attackers } = await openCampaignSession(campaignFile, {
    hostEnv: where.env,
    memoryLocation: where.url,
  });
  // Held by its lock as long as this worker lives: `witness clean` elsewhere leaves it alone.
  const runDirectory = await createRunDirectory(where.workDirectory, where.ownerPid, { ownerLock: true });
  runDirectories.push(runDirectory);
  return { run, campaign, target, redactor, attackers, runDirectory };
}
