import { type Kysely, Kysely as KyselyDb, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { InvalidOptionError } from '../errors.js';
import type { Tables } from '../memory/tables.js';

/**
 * The queue's own tables, beside the memory's, in the PostgreSQL schema `witness_queue` (pg-boss keeps its
 * jobs in `witness_boss`). They hold what a worker on another machine needs and what `witness runs show`
 * reports:
 *
 * - `runs`: one row per queued run — the stored run record, the campaign file's path inside its bundle,
 *   the bundle manifest (path → sha256), the job expiry, and `cancelled_at`.
 * - `blobs`: campaign files, content-addressed by sha256 (shared across runs).
 * - `attempts`: one row per (run, attack, attempt) — its job id, state, tries, worker, result and, while
 *   it runs, its lease (attempt-lease.ts). The primary key is the attempt itself, so a resubmission can
 *   never add a second row, and the row is locked (`for update`) by the transaction that stores the
 *   result and completes the job, which stores it only under the lease the worker holds, so a retried
 *   attempt can never store a second result.
 *
 * Created idempotently (`if not exists`) under an advisory lock, so workers starting together agree.
 */

export const QUEUE_SCHEMA = 'witness_queue';
export const BOSS_SCHEMA = 'witness_boss';
/** The one pg-boss queue every attempt job goes to (any worker takes attempts from any run). */
export const ATTEMPT_QUEUE = 'witness-attempts';

/** States of an attempt row (closed vocabulary). `retried` is derived for display, never stored. */
export const ATTEMPT_STATES = ['queued', 'running', 'done', 'cancelled', 'refused'] as const;
export type AttemptState = (typeof ATTEMPT_STATES)[number];

const DDL = [
  `create schema if not exists ${QUEUE_SCHEMA}`,
  `create table if not exists ${QUEUE_SCHEMA}.runs (
     run_id text primary key,
     run_json jsonb not null,
     campaign_file text not null,
     manifest jsonb not null,
     expire_seconds integer not null,
     submitted_at timestamptz not null default now(),
     cancelled_at timestamptz
   )`,
  `create table if not exists ${QUEUE_SCHEMA}.blobs (
     sha256 text primary key,
     size integer not null,
     content bytea not null
   )`,
  `create table if not exists ${QUEUE_SCHEMA}.attempts (
     run_id text not null references ${QUEUE_SCHEMA}.runs(run_id),
     attack text not null,
     attempt integer not null,
     seq integer not null,
     job_id uuid not null unique,
     state text not null default 'queued',
     tries integer not null default 0,
     worker text,
     started_at timestamptz,
     finished_at timestamptz,
     result_id text,
     outcome text,
     error text,
     lease uuid,
     lease_renewed_at timestamptz,
     lease_ms integer,
     primary key (run_id, attack, attempt)
   )`,
  // Tables made before leases get their columns. Checked first: ALTER TABLE would lock the table on every
  // start even when there is nothing to add. The index serves the sweep (running rows only), and names no
  // column a renewal writes, so renewals stay heap-only updates.
  `do $$ begin
     if not exists (select 1 from information_schema.columns
                     where table_schema = '${QUEUE_SCHEMA}' and table_name = 'attempts' and column_name = 'lease') then
       alter table ${QUEUE_SCHEMA}.attempts
         add column lease uuid, add column lease_renewed_at timestamptz, add column lease_ms integer;
     end if;
     if to_regclass('${QUEUE_SCHEMA}.attempts_running') is null then
       create index attempts_running on ${QUEUE_SCHEMA}.attempts (run_id) where state = 'running';
     end if;
   end $$`,
];

/** Queries go through Kysely's `sql` so the final transaction can also call the memory's writers. */
export type QueueDb = Kysely<Tables>;

export interface QueueConnection {
  db: QueueDb;
  url: string;
  close(): Promise<void>;
}

/** Opens a small pool on the database and makes sure the queue's tables exist. */
export async function openQueueDb(url: string, options: { max?: number } = {}): Promise<QueueConnection> {
  requirePostgres(url);
  const pool = new pg.Pool({ connectionString: url, max: options.max ?? 4 });
  pool.on('error', () => {});
  const db = new KyselyDb<Tables>({ dialect: new PostgresDialect({ pool }) });
  try {
    await db.transaction().execute(async (trx) => {
      // One creator at a time: concurrent `create ... if not exists` can still race on the catalog.
      await sql`select pg_advisory_xact_lock(hashtext(${QUEUE_SCHEMA}))`.execute(trx);
      for (const statement of DDL) await sql.raw(statement).execute(trx);
    });
  } catch (error) {
    await db.destroy();
    throw error;
  }
  return { db, url, close: () => db.destroy() };
}

/** A queue lives in PostgreSQL only: SQLite has no server for workers on other machines to share. */
export function requirePostgres(url: string): void {
  if (!/^postgres(ql)?:\/\//i.test(url)) {
    throw new InvalidOptionError(
      'a queue needs PostgreSQL: pass --db postgres://user@host/database (or set WITNESS_DB to one); a SQLite file serves one machine, so run without --queue',
    );
  }
}
