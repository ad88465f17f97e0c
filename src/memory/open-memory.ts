import { closeSync, existsSync, openSync } from 'node:fs';
import Database from 'better-sqlite3';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  PostgresDialect,
  type SqliteDatabase,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
  sql,
  type TransactionSettings,
} from 'kysely';
import pg from 'pg';
import { InvalidOptionError, MemoryUnavailableError, NoMemoryError, WitnessError } from '../errors.js';
import type { Memory, MemoryLocation } from './memory.js';
import { isMemoryFile, resolveMemoryFile } from './memory-path.js';
import { type Backend, migrate } from './migrations.js';
import { SqlMemory } from './sql-memory.js';
import type { Tables } from './tables.js';

/**
 * Opens (and creates or migrates) a memory.
 *
 * - `postgres://…` or `postgresql://…`: a PostgreSQL database (the `pg` driver; the URL's query string takes
 *   the usual `pg` options such as `sslmode`).
 * - anything else: a SQLite file path (created when missing, readable by its owner only; its directory
 *   must exist), or `:memory:`.
 *   The file runs in WAL mode with `synchronous=FULL` and foreign keys on, and waits up to `busyTimeoutMs`
 *   for other writers.
 *
 * Migrations are applied on open; a database written by a newer Witness fails with `SchemaTooNewError`.
 * Open one memory per SQLite file per process (several processes may share a file).
 *
 * ```ts
 * const memory = await openMemory('./witness.db');
 * try {
 *   console.log(await memory.listScores());
 * } finally {
 *   await memory.close();
 * }
 * ```
 */
export async function openMemory(target: string, options: OpenMemoryOptions = {}): Promise<Memory> {
  const busyTimeoutMs = options.busyTimeoutMs ?? 30_000;
  if (!Number.isInteger(busyTimeoutMs) || busyTimeoutMs <= 0) {
    throw new InvalidOptionError(`busyTimeoutMs must be a positive integer, got ${String(busyTimeoutMs)}`);
  }
  const now = options.now ?? (() => new Date().toISOString());
  if (typeof target !== 'string' || target.trim() === '') {
    throw new InvalidOptionError(
      'the database must be a SQLite file path, ":memory:" or a postgres:// URL; it is empty',
    );
  }
  const mustExist = options.mustExist === true;
  if (/^postgres(ql)?:\/\//i.test(target)) return openPostgres(target, busyTimeoutMs, now, mustExist);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(target)) {
    throw new InvalidOptionError(
      `unsupported database URL ${JSON.stringify(redactUrl(target))}: use a SQLite file path, ":memory:" or a postgres:// URL`,
    );
  }
  return openSqlite(target, busyTimeoutMs, now, mustExist);
}

export interface OpenMemoryOptions {
  /** How long a write waits for another writer's lock before failing (default 30,000 ms). */
  busyTimeoutMs?: number | undefined;
  /** The clock for `createdAt` defaults (UTC ISO-8601). */
  now?: (() => string) | undefined;
  /**
   * Only open a memory that already exists: a missing SQLite file, or a database without Witness's
   * tables, fails with MemoryUnavailableError ("no memory at …") and nothing is created. For readers
   * (listing, reporting, exporting): a mistyped path must not leave a new empty database behind.
   */
  mustExist?: boolean | undefined;
}

/** The page cache of a SQLite connection, in KiB (SQLite's default; see openSqlite). */
const SQLITE_PAGE_CACHE_KIB = 2000;

/**
 * `PRAGMA journal_mode = WAL`, retried while another process holds the lock it needs. Switching a new
 * file to WAL takes the read lock and then upgrades it; when several processes open the same new file at
 * once, SQLite answers one of two upgrading readers SQLITE_BUSY at once, without its busy handler (to
 * avoid a deadlock), so `timeout` does not cover it. Retrying after the other finishes does (the
 * durability suite's "concurrent first opening" test opens one new file from several processes).
 */
async function enterWalMode(database: Database.Database, busyTimeoutMs: number): Promise<void> {
  const deadline = Date.now() + busyTimeoutMs;
  for (let delayMs = 5; ; delayMs = Math.min(2 * delayMs, 200)) {
    try {
      database.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'SQLITE_BUSY' || Date.now() >= deadline) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, delayMs));
  }
}

async function openSqlite(
  path: string,
  busyTimeoutMs: number,
  now: () => string,
  mustExist: boolean,
): Promise<Memory> {
  let database: Database.Database;
  if (mustExist && path !== ':memory:' && !existsSync(path)) throw noMemory(path);
  try {
    if (!mustExist) createPrivately(path);
    database = new Database(path, { timeout: busyTimeoutMs, fileMustExist: mustExist });
    database.pragma('foreign_keys = ON');
    await enterWalMode(database, busyTimeoutMs);
    // FULL: a committed write survives power loss too, not only a killed process.
    database.pragma('synchronous = FULL');
    // better-sqlite3 builds SQLite with a 16 MB page cache per connection; a campaign that writes a few
    // hundred KiB per attempt fills it, so a long run's resident memory grows by 16 MB for no benefit
    // (writes are appended, reads are served by the OS page cache). SQLite's own default, 2 MiB, keeps it flat.
    database.pragma(`cache_size = -${SQLITE_PAGE_CACHE_KIB}`);
  } catch (error) {
    throw new MemoryUnavailableError(
      `cannot open the SQLite database ${JSON.stringify(path)}: ${(error as Error).message}; check that its directory exists and that the file is a Witness database`,
      { cause: error },
    );
  }
  const db = new Kysely<Tables>({
    dialect: new ImmediateSqliteDialect(
      { database: reusingStatements(database) },
      () => database.inTransaction,
    ),
  });
  return finishOpening(db, 'sqlite', { backend: 'sqlite', target: path }, now, mustExist);
}

/** How many prepared statements a SQLite memory keeps for reuse (Kysely's queries are a few dozen shapes). */
const STATEMENT_CACHE_SIZE = 128;

/**
 * The database as Kysely's SQLite driver sees it, with prepared statements reused by their SQL text. Kysely
 * prepares every query anew; a campaign runs the same few dozen statements thousands of times, and each
 * fresh statement is a SQLite allocation (parsed and planned again) that lives until V8 collects its
 * wrapper, so a long run fragmented the process's heap with them. A statement still busy (a
 * streamed read in progress) is never handed out twice: a fresh one is prepared instead. Least recently
 * used statements are dropped beyond {@link STATEMENT_CACHE_SIZE}.
 */
function reusingStatements(database: Database.Database): SqliteDatabase {
  const cache = new Map<string, Database.Statement>();
  return {
    close: () => database.close(),
    prepare: (sql: string) => {
      const cached = cache.get(sql);
      if (cached !== undefined && !cached.busy) {
        cache.delete(sql);
        cache.set(sql, cached);
        return cached;
      }
      const statement = database.prepare(sql);
      if (cached === undefined) {
        cache.set(sql, statement);
        if (cache.size > STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
      }
      return statement;
    },
  };
}

/**
 * Creates a missing database file readable by its owner only: observations hold file contents from the
 * workspace (attacker payloads, sometimes secrets). SQLite gives its -wal and -shm files the same mode.
 */
function createPrivately(path: string): void {
  if (!isMemoryFile(path)) return;
  try {
    // At the file a link names: `wx` refuses a link (EEXIST), and SQLite would then create the target 0644.
    closeSync(openSync(resolveMemoryFile(path), 'wx', 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

async function openPostgres(
  url: string,
  busyTimeoutMs: number,
  now: () => string,
  mustExist: boolean,
): Promise<Memory> {
  const pool = new pg.Pool({ connectionString: url, connectionTimeoutMillis: busyTimeoutMs });
  // An idle client losing its server must not crash the process; the next query reports the error.
  pool.on('error', () => {});
  const db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) });
  return finishOpening(db, 'postgres', { backend: 'postgres', target: redactUrl(url) }, now, mustExist);
}

async function finishOpening(
  db: Kysely<Tables>,
  backend: Backend,
  location: MemoryLocation,
  now: () => string,
  mustExist: boolean,
): Promise<Memory> {
  try {
    if (mustExist && !(await holdsWitnessTables(db, backend))) throw noMemory(location.target);
    await migrate(db, backend, now);
  } catch (error) {
    await db.destroy();
    if (error instanceof WitnessError) throw error;
    throw new MemoryUnavailableError(
      `cannot open the ${backend === 'sqlite' ? 'SQLite' : 'PostgreSQL'} database ${location.target}: ${(error as Error).message}`,
      { cause: error },
    );
  }
  return new SqlMemory(db, backend, location, now);
}

function noMemory(target: string): NoMemoryError {
  return new NoMemoryError(target);
}

/** Whether the database was ever opened by Witness (its schema table exists). */
async function holdsWitnessTables(db: Kysely<Tables>, backend: Backend): Promise<boolean> {
  const query =
    backend === 'sqlite'
      ? sql<{
          found: unknown;
        }>`select name as found from sqlite_master where type = 'table' and name = 'witness_schema'`
      : sql<{ found: unknown }>`select to_regclass('witness_schema') as found`;
  const { rows } = await query.execute(db);
  return rows.length > 0 && rows[0]?.found !== null && rows[0]?.found !== undefined;
}

/** A URL with its password replaced by `***` (for messages and `Memory.location`). */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return url.replace(/\/\/([^:/@]*):[^@/]*@/, '//$1:***@');
  }
}

/**
 * SQLite write transactions start with `BEGIN IMMEDIATE`: the write lock is taken up front, so a second
 * writer (another process) waits on the busy timeout instead of failing with SQLITE_BUSY when a deferred
 * transaction tries to upgrade its read lock. Read-only transactions (exports) stay deferred.
 */
class ImmediateSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;
  readonly #inTransaction: () => boolean;
  constructor(config: SqliteDialectConfig, inTransaction: () => boolean) {
    super(config);
    this.#config = config;
    this.#inTransaction = inTransaction;
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.#config, this.#inTransaction);
  }
}

class ImmediateSqliteDriver extends SqliteDriver {
  readonly #inTransaction: () => boolean;
  constructor(config: SqliteDialectConfig, inTransaction: () => boolean) {
    super(config);
    this.#inTransaction = inTransaction;
  }

  /**
   * SQLite rolls a transaction back by itself on some errors (a full disk: SQLITE_FULL, an I/O error): a
   * ROLLBACK then fails with "no transaction is active", and that error took the place of the cause.
   */
  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    if (this.#inTransaction()) await super.rollbackTransaction(connection);
  }

  override async beginTransaction(
    connection: DatabaseConnection,
    settings?: TransactionSettings,
  ): Promise<void> {
    const mode = settings?.accessMode === 'read only' ? 'deferred' : 'immediate';
    await connection.executeQuery(CompiledQuery.raw(`begin ${mode}`));
  }
}
