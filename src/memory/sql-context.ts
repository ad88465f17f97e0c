import type { Kysely, Transaction } from 'kysely';
import { MemoryUnavailableError } from '../errors.js';
import type { Backend } from './migrations.js';
import { translateSqlError } from './sql-errors.js';
import type { Tables } from './tables.js';

export type Db = Kysely<Tables> | Transaction<Tables>;

/**
 * What every part of the SQL memory shares (internal): the connection, the backend, the clock, and the
 * two ways in. Each write is one transaction; on SQLite every write transaction starts with
 * `BEGIN IMMEDIATE`, so concurrent writers queue on the busy timeout instead of failing mid-transaction.
 * Driver errors leave as typed errors (`translateSqlError`).
 */
export class SqlContext {
  readonly db: Kysely<Tables>;
  readonly backend: Backend;
  readonly now: () => string;
  #closed = false;

  constructor(db: Kysely<Tables>, backend: Backend, now: () => string) {
    this.db = db;
    this.backend = backend;
    this.now = now;
  }

  async read<T>(run: (db: Db) => Promise<T>): Promise<T> {
    this.assertOpen();
    try {
      return await run(this.db);
    } catch (error) {
      throw translateSqlError(error);
    }
  }

  async write<T>(run: (trx: Transaction<Tables>) => Promise<T>): Promise<T> {
    this.assertOpen();
    try {
      return await this.db.transaction().execute(run);
    } catch (error) {
      throw translateSqlError(error);
    }
  }

  assertOpen(): void {
    if (this.#closed) throw new MemoryUnavailableError('the memory is closed: open it again with openMemory');
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.db.destroy();
  }
}
