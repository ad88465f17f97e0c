import { sql } from 'kysely';
import type PgBoss from 'pg-boss';
import { NotFoundError } from '../errors.js';
import { DEFAULT_LEASE } from './attempt-lease.js';
import { ATTEMPT_QUEUE, BOSS_SCHEMA, QUEUE_SCHEMA, type QueueDb } from './queue-store.js';

/**
 * What `witness runs show|list` and `witness run --queue --wait` report, and `witness run --cancel`.
 *
 * An attempt's shown state joins our row with its pg-boss job: `done`, `cancelled` and `refused` are ours
 * and final; otherwise the job says whether it waits (`queued`), runs (`running`), waits or runs again
 * after a worker was lost or failed (`retried`: tries > 1, or the job is in pg-boss's retry state), or was
 * given up after its retries (`failed`).
 */

export const SHOWN_STATES = [
  'queued',
  'running',
  'retried',
  'done',
  'cancelled',
  'refused',
  'failed',
] as const;
export type ShownState = (typeof SHOWN_STATES)[number];
/** States after which nothing more happens to an attempt. */
export const FINAL_STATES: readonly ShownState[] = ['done', 'cancelled', 'refused', 'failed'];

export interface AttemptStatus {
  attack: string;
  attempt: number;
  state: ShownState;
  tries: number;
  worker: string | null;
  outcome: string | null;
  error: string | null;
  /** While the attempt runs under a lease (attempt-lease.ts); null otherwise. */
  lease: LeaseStatus | null;
}

/** Seconds, measured by the database's clock when the status was read. */
export interface LeaseStatus {
  /** Since its worker last renewed the lease. */
  renewedSecondsAgo: number;
  /**
   * The longest the attempt would wait to be back in the queue if its worker were lost now: what is left
   * of its lease (0 once lapsed), then one sweep interval.
   */
  backIfLostWithinSeconds: number;
  /** Until its job expires: the cap for a worker alive but stuck (it keeps renewing). */
  jobExpiresInSeconds: number | null;
}

export interface QueuedRunStatus {
  runId: string;
  campaign: string;
  submittedAt: string;
  cancelledAt: string | null;
  attempts: AttemptStatus[];
}

interface Row {
  attack: string;
  attempt: number;
  state: string;
  tries: number;
  worker: string | null;
  outcome: string | null;
  error: string | null;
  job_state: string | null;
  job_output: { value?: { message?: string } } | null;
  lease_age: string | null;
  lease_left: string | null;
  job_left: string | null;
}

export async function readRunStatus(db: QueueDb, runId: string): Promise<QueuedRunStatus> {
  const runs = await sql<{ run_json: { campaign: string }; submitted_at: Date; cancelled_at: Date | null }>`
    select run_json, submitted_at, cancelled_at from ${sql.raw(QUEUE_SCHEMA)}.runs where run_id = ${runId}`.execute(
    db,
  );
  const run = runs.rows[0];
  if (run === undefined) throw new NotFoundError(`run ${JSON.stringify(runId)} was not queued`);
  const { rows } = await sql<Row>`
    select a.attack, a.attempt, a.state, a.tries, a.worker, a.outcome, a.error,
           j.state as job_state, j.output as job_output,
           case when a.state = 'running' and a.lease is not null then
             extract(epoch from now() - a.lease_renewed_at) end as lease_age,
           case when a.state = 'running' and a.lease is not null then
             extract(epoch from a.lease_renewed_at + a.lease_ms * interval '1 millisecond' - now()) end as lease_left,
           case when j.state = 'active' then extract(epoch from j.started_on + j.expire_in - now()) end as job_left
      from ${sql.raw(QUEUE_SCHEMA)}.attempts a
      left join ${sql.raw(BOSS_SCHEMA)}.job j on j.name = ${ATTEMPT_QUEUE} and j.id = a.job_id
     where a.run_id = ${runId}
     order by a.seq`.execute(db);
  return {
    runId,
    campaign: run.run_json.campaign,
    submittedAt: run.submitted_at.toISOString(),
    cancelledAt: run.cancelled_at?.toISOString() ?? null,
    attempts: rows.map((row) => ({
      attack: row.attack,
      attempt: row.attempt,
      state: shownState(row),
      tries: row.tries,
      worker: row.worker,
      outcome: row.outcome,
      error: row.error ?? (row.job_state === 'failed' ? (row.job_output?.value?.message ?? null) : null),
      lease: leaseOf(row),
    })),
  };
}

function leaseOf(row: Row): LeaseStatus | null {
  if (row.lease_age === null || row.lease_left === null) return null;
  const seconds = (value: string) => Math.round(Number(value) * 10) / 10;
  return {
    renewedSecondsAgo: Math.max(0, seconds(row.lease_age)),
    backIfLostWithinSeconds: Math.max(0, seconds(row.lease_left)) + DEFAULT_LEASE.sweepEveryMs / 1000,
    jobExpiresInSeconds: row.job_left === null ? null : Math.max(0, seconds(row.job_left)),
  };
}

function shownState(row: Row): ShownState {
  if (row.state === 'done' || row.state === 'cancelled' || row.state === 'refused') return row.state;
  switch (row.job_state) {
    case 'failed':
      return 'failed';
    case 'cancelled':
      return 'cancelled';
    case 'retry':
      return 'retried';
    case 'active':
      return row.tries > 1 ? 'retried' : 'running';
    default:
      return row.tries > 0 ? 'retried' : 'queued';
  }
}

export async function listQueuedRunIds(db: QueueDb): Promise<string[]> {
  const { rows } = await sql<{ run_id: string }>`
    select run_id from ${sql.raw(QUEUE_SCHEMA)}.runs order by submitted_at, run_id`.execute(db);
  return rows.map((row) => row.run_id);
}

/** Counts per shown state, in the vocabulary's order, zeros left out. */
export function countStates(attempts: readonly AttemptStatus[]): Array<[ShownState, number]> {
  return SHOWN_STATES.map(
    (state) => [state, attempts.filter((attempt) => attempt.state === state).length] as [ShownState, number],
  ).filter(([, count]) => count > 0);
}

/**
 * Stops handing out the run's attempts: marks the run cancelled (workers check it before they start an
 * attempt, and read it with every renewal of a running attempt's lease) and cancels its jobs not yet
 * taken. Returns how many
 * waiting attempts were cancelled.
 */
export async function cancelRun(db: QueueDb, boss: PgBoss, runId: string): Promise<number> {
  const updated =
    await sql`update ${sql.raw(QUEUE_SCHEMA)}.runs set cancelled_at = coalesce(cancelled_at, now())
                            where run_id = ${runId}`.execute(db);
  if (Number(updated.numAffectedRows ?? 0n) === 0) {
    throw new NotFoundError(`run ${JSON.stringify(runId)} was not queued`);
  }
  const { rows } = await sql<{ job_id: string }>`
    update ${sql.raw(QUEUE_SCHEMA)}.attempts set state = 'cancelled', finished_at = now()
     where run_id = ${runId} and state = 'queued' returning job_id`.execute(db);
  const ids = rows.map((row) => row.job_id);
  for (let i = 0; i < ids.length; i += 500) await boss.cancel(ATTEMPT_QUEUE, ids.slice(i, i + 500));
  return ids.length;
}
