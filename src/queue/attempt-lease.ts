import { sql } from 'kysely';
import type PgBoss from 'pg-boss';
import type { AttemptJob } from './attempt-job.js';
import { bossIn } from './boss.js';
import { ATTEMPTS_CHANNEL } from './job-wakeup.js';
import { ATTEMPT_QUEUE, QUEUE_SCHEMA, type QueueDb } from './queue-store.js';

/**
 * The lease on a running attempt: how a lost worker's attempts come back in seconds, not when their job
 * expires.
 *
 * Taking an attempt gives it a lease: a fresh token, the time it was last renewed and how long it lasts,
 * in the attempt's own row (`lease`, `lease_renewed_at`, `lease_ms`). While it runs the attempt, the
 * worker renews the leases of every attempt it holds with ONE statement every {@link LeaseTiming.renewEveryMs}
 * (which also reads whether their runs were cancelled). Every worker sweeps every
 * {@link LeaseTiming.sweepEveryMs}: ONE transaction finds the running attempts whose lease lapsed (not
 * renewed for `lease_ms`, several renewals missed), puts their rows back to `queued`, fails their jobs
 * with pg-boss's own `fail` (its retry accounting: the job waits as `retry`, or is `failed` once its
 * retries are used up), and notifies idle workers, who take them at once. A worker killed just after a
 * renewal is thus retried at most `lease + sweep` after its death (15 + 5 s by default), whatever the
 * campaign's attempt timeout; the database's clock alone decides what lapsed.
 *
 * The job's expiry (attempt timeout + grace, enforced by pg-boss's maintenance) stays the cap for a
 * worker alive but stuck: it keeps renewing, its job expires, another worker takes the attempt with a
 * new lease, and the stuck worker's next renewal finds its lease gone.
 *
 * A worker that finds its lease gone — not renewed, or replaced — stops that attempt, and stores nothing:
 * the result's transaction stores a result only under the lease the worker holds (attempt-transactions.ts).
 * A worker that cannot reach the database stops its attempts once their lease would have lapsed by its
 * own clock, as the database's sweep would count.
 *
 * Lock order is the completion's: the attempt rows first (the sweep skips rows locked by a worker storing
 * a result or renewing), then the jobs (`fail`); taking locks the job and only skips a locked attempt.
 */

export interface LeaseTiming {
  /** How often a worker renews its leases (one statement for all of them). */
  renewEveryMs: number;
  /** How long a lease lasts without renewal before any worker's sweep returns the attempt to the queue. */
  lapseMs: number;
  /** How often each worker sweeps for lapsed leases. */
  sweepEveryMs: number;
}

export const DEFAULT_LEASE: LeaseTiming = { renewEveryMs: 3000, lapseMs: 15_000, sweepEveryMs: 5000 };

/** The longest a lost worker's attempt waits before it is back in the queue: its lease, then one sweep. */
export function lostAttemptWaitMs(timing: LeaseTiming = DEFAULT_LEASE): number {
  return timing.lapseMs + timing.sweepEveryMs;
}

export interface HeldLease {
  job: AttemptJob;
  lease: string;
}

export interface Renewal {
  /** Leases still held (renewed now), with whether their run was cancelled. */
  held: Map<string, { cancelled: boolean }>;
}

/** Renews every lease in `held` in one statement; a lease not returned is lost. */
export async function renewLeases(db: QueueDb, held: readonly HeldLease[]): Promise<Renewal> {
  if (held.length === 0) return { held: new Map() };
  const { rows } = await sql<{ lease: string; cancelled: boolean }>`
    with renewed as (
      update ${sql.raw(QUEUE_SCHEMA)}.attempts a set lease_renewed_at = now()
        from unnest(${held.map((h) => h.job.runId)}::text[], ${held.map((h) => h.job.attack)}::text[],
                    ${held.map((h) => h.job.attempt)}::int[], ${held.map((h) => h.lease)}::uuid[])
             as k(run_id, attack, attempt, lease)
       where a.run_id = k.run_id and a.attack = k.attack and a.attempt = k.attempt
         and a.state = 'running' and a.lease = k.lease
      returning a.run_id, a.lease
    )
    select r.lease::text as lease, q.cancelled_at is not null as cancelled
      from renewed r join ${sql.raw(QUEUE_SCHEMA)}.runs q on q.run_id = r.run_id`.execute(db);
  return { held: new Map(rows.map((row) => [row.lease, { cancelled: row.cancelled }])) };
}

export interface SweptAttempt {
  job: AttemptJob;
  worker: string | null;
}

/**
 * Returns the attempts whose lease lapsed to the queue, in one transaction: their rows back to `queued`
 * (the lease cleared, the reason in `error`), their jobs failed through pg-boss (retried, or failed once
 * out of retries), and a notification to idle workers, delivered when it commits.
 */
export async function sweepLapsedLeases(db: QueueDb, boss: PgBoss): Promise<SweptAttempt[]> {
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<{
      run_id: string;
      attack: string;
      attempt: number;
      job_id: string;
      worker: string | null;
    }>`
      with lapsed as (
        select run_id, attack, attempt from ${sql.raw(QUEUE_SCHEMA)}.attempts
         where state = 'running' and lease_renewed_at + lease_ms * interval '1 millisecond' < now()
           for update skip locked
      )
      update ${sql.raw(QUEUE_SCHEMA)}.attempts a
         set state = 'queued', lease = null,
             error = 'its worker ' || coalesce(a.worker, '(unknown)') || ' stopped renewing its lease; back in the queue'
        from lapsed l
       where a.run_id = l.run_id and a.attack = l.attack and a.attempt = l.attempt
      returning a.run_id, a.attack, a.attempt, a.job_id::text as job_id, a.worker`.execute(trx);
    if (rows.length === 0) return [];
    // One by one: pg-boss 10 types `fail` of several ids without an output. A sweep finds a lost
    // worker's few attempts (its concurrency), not a batch.
    const output = { message: 'its worker stopped renewing the lease' };
    for (const row of rows) await boss.fail(ATTEMPT_QUEUE, row.job_id, output, { db: bossIn(trx) });
    await sql`select pg_notify(${ATTEMPTS_CHANNEL}, '')`.execute(trx);
    return rows.map((row) => ({
      job: { runId: row.run_id, attack: row.attack, attempt: row.attempt },
      worker: row.worker,
    }));
  });
}

/** Why an attempt was stopped: its lease is gone (lapsed and swept, or the attempt taken by another). */
export class LeaseLost extends Error {
  constructor(detail: string) {
    super(`the attempt's lease was lost (${detail}); another worker runs it`);
    this.name = 'LeaseLost';
  }
}

/** Why an attempt was stopped: its run was cancelled (seen by a renewal). */
export class RunCancelled extends Error {
  constructor() {
    super('the run was cancelled');
    this.name = 'RunCancelled';
  }
}

interface Held extends HeldLease {
  abort: AbortController;
  /** The worker is storing its result: that transaction decides under the lease, not the renewal. */
  completing: boolean;
  /** When (this process's clock) the lease was last known renewed. */
  renewedAt: number;
}

/**
 * A worker's leases: it renews them on a timer, stops an attempt whose lease is gone or whose run was
 * cancelled (through the attempt's abort signal, with a {@link LeaseLost} or {@link RunCancelled} reason),
 * and sweeps lapsed leases of any worker on a second timer.
 */
export class LeaseKeeper {
  readonly #held = new Map<string, Held>();
  readonly #timers: NodeJS.Timeout[] = [];
  #renewing = false;
  #sweeping = false;

  constructor(
    private readonly db: QueueDb,
    private readonly boss: PgBoss,
    private readonly timing: LeaseTiming,
    private readonly log: (line: string) => void,
    private readonly now: () => number = () => performance.now(),
  ) {}

  start(): void {
    this.#timers.push(setInterval(() => void this.renew(), this.timing.renewEveryMs));
    this.#timers.push(setInterval(() => void this.sweep(), this.timing.sweepEveryMs));
  }

  stop(): void {
    for (const timer of this.#timers.splice(0)) clearInterval(timer);
  }

  /** Starts keeping a lease just taken; returns the signal that stops its attempt. */
  hold(job: AttemptJob, lease: string): AbortController {
    const abort = new AbortController();
    this.#held.set(lease, { job, lease, abort, completing: false, renewedAt: this.now() });
    return abort;
  }

  /** The worker is storing the attempt's result (which checks the lease itself): do not stop it now. */
  completing(lease: string): void {
    const held = this.#held.get(lease);
    if (held !== undefined) held.completing = true;
  }

  release(lease: string): void {
    this.#held.delete(lease);
  }

  /** One renewal of every held lease; never throws. */
  async renew(): Promise<void> {
    if (this.#renewing || this.#held.size === 0) return;
    this.#renewing = true;
    const sent = [...this.#held.values()];
    const sentAt = this.now();
    try {
      const { held } = await renewLeases(this.db, sent);
      for (const lease of sent) {
        const renewed = held.get(lease.lease);
        if (renewed === undefined) {
          if (!lease.completing) lease.abort.abort(new LeaseLost('not renewed: lapsed, or taken again'));
          continue;
        }
        lease.renewedAt = sentAt;
        if (renewed.cancelled) lease.abort.abort(new RunCancelled());
      }
    } catch (error) {
      // The database is out of reach: once a lease would have lapsed by this process's clock, a sweep may
      // have handed its attempt to another worker; stop it rather than finish work that cannot be stored.
      for (const lease of sent) {
        if (!lease.completing && this.now() - lease.renewedAt >= this.timing.lapseMs) {
          lease.abort.abort(
            new LeaseLost(`not renewed for ${this.timing.lapseMs} ms: ${(error as Error).message}`),
          );
        }
      }
    } finally {
      this.#renewing = false;
    }
  }

  /** One sweep for lapsed leases of any worker; never throws. */
  async sweep(): Promise<SweptAttempt[]> {
    if (this.#sweeping) return [];
    this.#sweeping = true;
    try {
      const swept = await sweepLapsedLeases(this.db, this.boss);
      for (const { job, worker } of swept) {
        this.log(
          `${job.runId} ${job.attack} #${job.attempt}: its worker ${worker ?? '(unknown)'} stopped renewing its lease; back in the queue\n`,
        );
      }
      return swept;
    } catch {
      // The next sweep (this worker's or another's) tries again.
      return [];
    } finally {
      this.#sweeping = false;
    }
  }
}
