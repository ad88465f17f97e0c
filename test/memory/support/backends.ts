import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { needsPostgres } from '../../support/requirements.js';

/**
 * The backends every memory contract test runs on. SQLite always runs; PostgreSQL runs when
 * WITNESS_TEST_PG_URL names a server (scripts/start-test-postgres.sh starts one), and is reported as
 * skipped otherwise. Each `fresh()` database is private to its caller (a temp file, or a new PostgreSQL
 * database), because node runs test files in parallel.
 */

export interface TestDatabase {
  /** What `openMemory` takes: a file path or a postgres:// URL. */
  target: string;
  /** Runs raw SQL on the database, bypassing Witness (to prove what the database itself enforces). */
  exec(statement: string): Promise<void>;
  /** Reads rows with raw SQL. */
  query(statement: string): Promise<Record<string, unknown>[]>;
  cleanup(): Promise<void>;
}

export interface TestBackend {
  name: 'sqlite' | 'postgres';
  /** Why this backend is skipped, or undefined when it runs. */
  skip: string | undefined;
  fresh(): Promise<TestDatabase>;
}

export const PG_SKIP_REASON = needsPostgres || 'PostgreSQL not given';

export const sqliteBackend: TestBackend = {
  name: 'sqlite',
  skip: undefined,
  async fresh() {
    const dir = await mkdtemp(join(tmpdir(), 'witness-memory-'));
    const target = join(dir, 'witness.db');
    const withDb = <T>(run: (db: Database.Database) => T): T => {
      const db = new Database(target, { timeout: 10_000 });
      try {
        return run(db);
      } finally {
        db.close();
      }
    };
    return {
      target,
      async exec(statement) {
        withDb((db) => db.exec(statement));
      },
      async query(statement) {
        return withDb((db) => db.prepare(statement).all() as Record<string, unknown>[]);
      },
      async cleanup() {
        await rm(dir, { recursive: true, force: true });
      },
    };
  },
};

const pgUrl = process.env.WITNESS_TEST_PG_URL;

export const postgresBackend: TestBackend = {
  name: 'postgres',
  skip: needsPostgres || undefined,
  async fresh() {
    if (pgUrl === undefined) throw new Error(PG_SKIP_REASON);
    const name = `witness_t_${process.pid}_${randomBytes(6).toString('hex')}`;
    await withClient(pgUrl, (client) => client.query(`create database ${name}`));
    const url = new URL(pgUrl);
    url.pathname = `/${name}`;
    const target = url.toString();
    return {
      target,
      async exec(statement) {
        await withClient(target, (client) => client.query(statement));
      },
      async query(statement) {
        return withClient(target, async (client) => (await client.query(statement)).rows);
      },
      async cleanup() {
        await withClient(pgUrl, (client) => client.query(`drop database if exists ${name} with (force)`));
      },
    };
  },
};

export const BACKENDS: readonly TestBackend[] = [sqliteBackend, postgresBackend];

async function withClient<T>(url: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}
