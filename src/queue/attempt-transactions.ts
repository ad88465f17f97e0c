import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type PgBoss from 'pg-boss';
import { storeAttackResult } from '../memory/store-records.js';
import { type AttackResult, AttackResultSchema } from '../models/attack-result.js';
import { parseRecord } from '../models/record.js';
import { type AttemptJob, AttemptJobSchema } from './attempt-job.js';
import { bossIn } from './boss.js';
import { ATTEMPT_QUEUE, QUEUE_SCHEMA, type QueueDb } from './queue-store.js';

/**
 * The worker's transactions on an attempt: take it, store its result, end it without one, hand it back.
 *
 * Every write to a running attempt is made under the lease its worker took with it (attempt-lease.ts):
 * a worker whose lease lapsed, or was replaced, stores nothing, finishes nothing and hands nothing back.
 *
 * Lock order. A worker taking a job locks the job's row (pg-boss's fetch) and then the attempt's row; a
 * worker storing a result (or handing it back, or a sweep returning lapsed leases) locks the attempt's
 * row and then the job's (pg-boss's complete or fail). Two workers can hold the same attempt only after
 * its job was handed out again; so that they can never wait for each other in a cycle, taking skips an
 * attempt row that is locked and rolls the whole take back (the job goes back untouched and is fetched
 * again a moment later).
 */

export type Taken =
  /** The attempt is now `running` under this worker, with a fresh lease (attempt-lease.ts). */
  | { kind: 'claimed'; jobId: string; job: AttemptJob; lease: string }
  /** Its run was cancelled: the attempt is now `cancelled` and its job complete. */
  | { kind: 'cancelled'; jobId: string; job: AttemptJob }
  /** It already ended (another worker stored it, or it was refused); its job is now complete. */
  | { kind: 'final'; jobId: string; job: AttemptJob }
  /** The job does not carry a Witness attempt: it is failed (pg-boss retries, then gives up). */
  | { kind: 'foreign'; jobId: string }
  /** Another worker is storing this attempt's result right now: nothing was taken. */
  | { kind: 'busy' };

/**
 * Fetches the next job and claims its attempt in ONE transaction, and returns undefined when there is no
 * job: one commit, and one statement that locks, checks (ended? run cancelled?) and claims the attempt.
 *
 * A take is committed with `synchronous_commit = off` (set by the claiming statement): it is the one
 * write a database crash may lose, and losing it only puts the job back to be taken again — a claim lost
 * lets the attempt run twice, which the result's transaction (durable, behind the attempt row's lock)
 * already makes harmless: one result; a lost completion of an ended or cancelled attempt's job is simply
 * done again.
 */
export async function takeNextAttempt(
  db: QueueDb,
  boss: PgBoss,
  workerId: string,
  leaseMs: number,
): Promise<Taken | undefined> {
  const lease = randomUUID();
  const taken = db.transaction().execute(async (trx): Promise<Taken | undefined> => {
    const [fetched] = await boss.fetch<unknown>(ATTEMPT_QUEUE, { batchSize: 1, db: bossIn(trx) });
    if (fetched === undefined) return undefined;
    const parsed = AttemptJobSchema.safeParse(fetched.data);
    if (!parsed.success) {
      const failure = { message: 'the job is not a Witness attempt' };
      await boss.fail(ATTEMPT_QUEUE, fetched.id, failure, { db: bossIn(trx) });
      return { kind: 'foreign', jobId: fetched.id };
    }
    const job = parsed.data;
    // One statement: lock the attempt's row (skipping it when locked), read its run's cancellation, and
    // claim it unless it already ended or its run was cancelled. A row still `running` under another
    // worker (its job expired: that worker is stuck) gets this worker's lease, which ends the other's.
    const { rows } = await sql<{ state: string; cancelled: boolean; claimed: boolean }>`
      with target as (
        select a.run_id, a.attack, a.attempt, a.state, r.cancelled_at is not null as cancelled
          from ${sql.raw(QUEUE_SCHEMA)}.attempts a
          join ${sql.raw(QUEUE_SCHEMA)}.runs r on r.run_id = a.run_id
         where a.run_id = ${job.runId} and a.attack = ${job.attack} and a.attempt = ${job.attempt}
           for update of a skip locked
      ), claimed as (
        update ${sql.raw(QUEUE_SCHEMA)}.attempts a
           set state = 'running', tries = a.tries + 1, worker = ${workerId}, started_at = now(), error = null,
               lease = ${lease}, lease_renewed_at = now(), lease_ms = ${leaseMs}
          from target t
         where a.run_id = t.run_id and a.attack = t.attack and a.attempt = t.attempt
           and t.state not in ('done', 'cancelled', 'refused') and not t.cancelled
        returning a.attempt
      )
      select t.state, t.cancelled, exists (select 1 from claimed) as claimed,
             set_config('synchronous_commit', 'off', true) as commit_mode
        from target t`.execute(trx);
    const row = rows[0];
    if (row?.claimed === true) return { kind: 'claimed', jobId: fetched.id, job, lease };
    if (row === undefined) {
      const exists = await sql`select 1 from ${sql.raw(QUEUE_SCHEMA)}.attempts
        where run_id = ${job.runId} and attack = ${job.attack} and attempt = ${job.attempt}`.execute(trx);
      if (exists.rows.length > 0) throw new AttemptBusy();
    }
    const state = row?.state;
    if (state === undefined || state === 'done' || state === 'cancelled' || state === 'refused') {
      const output = { alreadyFinal: state ?? 'unknown' };
      await boss.complete(ATTEMPT_QUEUE, fetched.id, output, { db: bossIn(trx) });
      return { kind: state === 'cancelled' ? 'cancelled' : 'final', jobId: fetched.id, job };
    }
    // Not claimed and not ended: its run was cancelled, so the attempt is cancelled without starting.
    await sql`update ${sql.raw(QUEUE_SCHEMA)}.attempts set state = 'cancelled', finished_at = now()
               where run_id = ${job.runId} and attack = ${job.attack} and attempt = ${job.attempt}`.execute(
      trx,
    );
    await boss.complete(ATTEMPT_QUEUE, fetched.id, { cancelled: true }, { db: bossIn(trx) });
    return { kind: 'cancelled', jobId: fetched.id, job };
  });
  return taken.catch((error: unknown) => {
    if (error instanceof AttemptBusy) return { kind: 'busy' } as const;
    throw error;
  });
}

/** Thrown inside the take to roll it back (the attempt row is locked by a worker storing its result). */
class AttemptBusy extends Error {}

/**
 * The exactly-once step: result, row and job completion in one transaction, behind the row lock, under
 * the worker's lease. Returns false — and stores nothing, and leaves the job alone — when the lease is no
 * longer this worker's: it lapsed and was swept, or another worker took the attempt (and so its job).
 */
export async function completeWithResult(
  db: QueueDb,
  boss: PgBoss,
  held: { job: AttemptJob; jobId: string; lease: string },
  workerId: string,
  result: AttackResult,
): Promise<boolean> {
  const { job, jobId, lease } = held;
  const record = parseRecord(AttackResultSchema, result, 'attack result');
  return db.transaction().execute(async (trx) => {
    // Locks the row and tests the lease in one statement: a row not running under this lease is not
    // updated, and then nothing of this attempt is stored.
    const updated = await sql`update ${sql.raw(QUEUE_SCHEMA)}.attempts
                 set state = 'done', finished_at = now(), worker = ${workerId}, result_id = ${record.id},
                     outcome = ${record.outcome}, error = null, lease = null
               where run_id = ${job.runId} and attack = ${job.attack} and attempt = ${job.attempt}
                 and state = 'running' and lease = ${lease}`.execute(trx);
    if (Number(updated.numAffectedRows ?? 0n) === 0) return false;
    await storeAttackResult(trx, record);
    await boss.complete(ATTEMPT_QUEUE, jobId, { resultId: record.id }, { db: bossIn(trx) });
    return true;
  });
}

/**
 * Stores one round of an adaptive attack's chain that is not its last (SPEC §15: a chain is one job; its
 * last round is stored by {@link completeWithResult}). Behind the attempt row's lock and under the
 * worker's lease: a worker whose lease lapsed or was replaced stores nothing more (returns false and
 * should stop), so each round is stored once and the worker that took the attempt over resumes after the
 * rounds already stored.
 */
export async function storeRoundResult(
  db: QueueDb,
  held: { job: AttemptJob; lease: string },
  result: AttackResult,
): Promise<boolean> {
  const { job, lease } = held;
  const record = parseRecord(AttackResultSchema, result, 'attack result');
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ state: string }>`
      select state from ${sql.raw(QUEUE_SCHEMA)}.attempts
       where run_id = ${job.runId} and attack = ${job.attack} and attempt = ${job.attempt}
         and state = 'running' and lease = ${lease}
         for update`.execute(trx);
    if (rows.length === 0) return false;
    await storeAttackResult(trx, record);
    return true;
  });
}

/**
 * Ends an attempt with no result (refused or cancelled) and completes its job, in one transaction, under
 * the worker's lease (without it, the attempt and its job are another worker's now: nothing is changed).
 */
export async function finishWithout(
  db: QueueDb,
  boss: PgBoss,
  held: { job: AttemptJob; jobId: string; lease: string },
  state: 'refused' | 'cancelled',
  reason: string,
): Promise<boolean> {
  const { job, jobId, lease } = held;
  return db.transaction().execute(async (trx) => {
    const updated =
      await sql`update ${sql.raw(QUEUE_SCHEMA)}.attempts set state = ${state}, finished_at = now(), error = ${reason}, lease = null
               where run_id = ${job.runId} and attack = ${job.attack} and attempt = ${job.attempt}
                 and state = 'running' and lease = ${lease}`.execute(trx);
    if (Number(updated.numAffectedRows ?? 0n) === 0) return false;
    await boss.complete(ATTEMPT_QUEUE, jobId, { [state]: reason }, { db: bossIn(trx) });
    return true;
  });
}

/**
 * Gives the attempt back (the worker stops, cannot prepare the run, or the memory failed), in one
 * transaction under the worker's lease: its row waits again and its job is failed, which pg-boss retries
 * until the queue's retry limit. Without the lease nothing is changed (another worker has the attempt).
 * Never throws — a worker that cannot reach the database leaves the lease to lapse instead.
 */
export async function handBack(
  db: QueueDb,
  boss: PgBoss,
  held: { job: AttemptJob; jobId: string; lease: string },
  message: string,
): Promise<void> {
  const { job, jobId, lease } = held;
  await db
    .transaction()
    .execute(async (trx) => {
      const updated =
        await sql`update ${sql.raw(QUEUE_SCHEMA)}.attempts set state = 'queued', error = ${message}, lease = null
                 where run_id = ${job.runId} and attack = ${job.attack} and attempt = ${job.attempt}
                   and state = 'running' and lease = ${lease}`.execute(trx);
      if (Number(updated.numAffectedRows ?? 0n) === 0) return;
      await boss.fail(ATTEMPT_QUEUE, jobId, { message }, { db: bossIn(trx) });
    })
    .catch(() => {});
}
