import {
  accessSync,
  closeSync,
  constants,
  copyFileSync,
  existsSync,
  fstatSync,
  mkdtempSync,
  openSync,
  readSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { InvalidOptionError, MemoryUnavailableError, SchemaTooNewError, WitnessError } from '../errors.js';
import type { Memory, MemoryLocation } from './memory.js';
import { MEMORY_SCHEMA_VERSION } from './migrations.js';
import { redactUrl } from './open-memory.js';
import { SqlMemory } from './sql-memory.js';
import type { Tables } from './tables.js';

/**
 * Read-only access to an existing memory, for viewers (`witness view`) that must never create, migrate
 * or write a database, whoever else is writing to it at the same time.
 *
 * ```ts
 * const reader = await openMemoryReader('./witness.db');
 * try {
 *   const results = await reader.read((memory) => memory.listAttackResults());
 * } finally {
 *   await reader.close();
 * }
 * ```
 *
 * Guarantees:
 * - A missing SQLite file, a database without Witness's tables, or one whose schema is older or newer
 *   than this Witness reads is refused with a typed error naming the fix; nothing is created or migrated.
 * - PostgreSQL sessions are read-only (`default_transaction_read_only`): a bug that tried to write would
 *   fail in the server, not change evidence.
 * - SQLite: the file is read where it is, one connection per `read`, which never blocks a writer and
 *   leaves no file behind; where this process may write the file and its directory, every statement is
 *   refused a write (`query_only`). A database in a directory this process may not write, with no writer
 *   active, is read from a private copy on disk (see `SqliteReader.read` for why).
 */
export interface MemoryReader {
  readonly location: MemoryLocation;
  /** Runs `work` on a consistent, read-only view of the memory; writes through it fail. */
  read<T>(work: (memory: Memory) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export async function openMemoryReader(target: string): Promise<MemoryReader> {
  if (typeof target !== 'string' || target.trim() === '') {
    throw new InvalidOptionError(
      'the database must be a SQLite file path or a postgres:// URL of an existing memory; it is empty',
    );
  }
  if (/^postgres(ql)?:\/\//i.test(target)) return openPostgresReader(target);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(target) || target.startsWith('file:')) {
    throw new InvalidOptionError(
      `unsupported database ${JSON.stringify(redactUrl(target))}: use a SQLite file path or a postgres:// URL`,
    );
  }
  if (target === ':memory:') {
    throw new InvalidOptionError('an in-memory database holds nothing to read: name a SQLite file');
  }
  const reader = new SqliteReader(target);
  // Fail now, not on the first page view, when the file is missing or not a readable Witness memory.
  await reader.read(async () => undefined);
  return reader;
}

/** Identity of the file's current content: any write by SQLite changes the size or a change time. */
function fileVersion(stat: {
  dev: bigint;
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
}): string {
  return `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`;
}

const COPY_ATTEMPTS = 5;

/** A private copy of a database nobody can write to (see {@link SqliteReader.read}). */
interface PrivateCopy {
  version: string;
  dir: string;
  memory: Memory;
  users: number;
  retired: boolean;
}

class SqliteReader implements MemoryReader {
  readonly location: MemoryLocation;
  readonly #path: string;
  #copy: PrivateCopy | undefined;
  #closed = false;

  constructor(path: string) {
    this.#path = path;
    this.location = { backend: 'sqlite', target: path };
  }

  /**
   * Each read opens the file where it is, for that read only, in one of two ways:
   * - where this process may write the file and its directory, a read-write connection whose every
   *   statement is refused a write (`query_only`). It is an ordinary WAL reader: it never blocks a writer,
   *   sees each commit, and, being able to write, SQLite's last connection to close removes the `-wal`
   *   and `-shm` files it made (a read-only connection makes them and can never remove them again; as
   *   root, SQLite gives them to the database's owner, so a campaign running as that owner can use them).
   * - else, when a writer's `-wal` exists, a read-only connection that uses the writer's files.
   * Only a database that nobody can be writing (no `-wal`, and a file or directory this process may not
   * write: SQLite cannot read a WAL database there without making files it cannot make) is read from a
   * private copy on disk, made once per change of the file and checked, by size and change times, not to
   * have changed while it was copied. Nothing is ever held in memory but SQLite's page cache.
   */
  async read<T>(work: (memory: Memory) => Promise<T>): Promise<T> {
    if (this.#closed) throw new MemoryUnavailableError('the memory reader is closed');
    this.#checkFile();
    if (this.#mayWriteInPlace()) {
      return this.#inPlace(work, () => {
        const database = new Database(this.#path, { fileMustExist: true, timeout: 5_000 });
        database.pragma('query_only = 1');
        return database;
      });
    }
    if (!existsSync(`${this.#path}-wal`)) {
      const copy = await this.#currentCopy();
      if (copy !== undefined) {
        copy.users++;
        try {
          return await work(copy.memory);
        } finally {
          copy.users--;
          if (copy.retired && copy.users === 0) await dropCopy(copy);
        }
      }
    }
    return this.#inPlace(
      work,
      () => new Database(this.#path, { readonly: true, fileMustExist: true, timeout: 5_000 }),
    );
  }

  async close(): Promise<void> {
    this.#closed = true;
    const copy = this.#copy;
    this.#copy = undefined;
    if (copy !== undefined) {
      copy.retired = true;
      if (copy.users === 0) await dropCopy(copy);
    }
  }

  async #inPlace<T>(work: (memory: Memory) => Promise<T>, connect: () => Database.Database): Promise<T> {
    const memory = await this.#open(connect);
    try {
      return await work(memory);
    } finally {
      await memory.close();
    }
  }

  /** Whether SQLite, in this process, can make and remove the `-wal` and `-shm` files beside the database. */
  #mayWriteInPlace(): boolean {
    try {
      accessSync(this.#path, constants.R_OK | constants.W_OK);
      accessSync(dirname(resolve(this.#path)), constants.W_OK | constants.X_OK);
      return true;
    } catch {
      return false;
    }
  }

  #checkFile(): void {
    let isFile: boolean;
    try {
      isFile = statSync(this.#path).isFile();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
        throw new MemoryUnavailableError(
          `cannot read the SQLite database ${JSON.stringify(this.#path)}: ${(error as Error).message}`,
          { cause: error },
        );
      }
      throw new MemoryUnavailableError(
        `there is no database at ${JSON.stringify(this.#path)} (nothing is created for viewing): run \`witness run <campaign.yaml>\` first, or name an existing memory with --db`,
      );
    }
    if (!isFile) {
      throw new MemoryUnavailableError(`${JSON.stringify(this.#path)} is not a file: name a SQLite database`);
    }
  }

  /** The private copy of the file as it is now; undefined when the file kept changing. */
  async #currentCopy(): Promise<PrivateCopy | undefined> {
    for (let attempt = 0; attempt < COPY_ATTEMPTS; attempt++) {
      const current = this.#copy;
      const version = fileVersion(statSync(this.#path, { bigint: true }));
      if (current !== undefined && current.version === version) return current;
      const made = this.#copyFile();
      if (made === undefined) continue;
      let memory: Memory;
      try {
        memory = await this.#open(() => new Database(made.file, { readonly: true, fileMustExist: true }));
      } catch (error) {
        rmSync(made.dir, { recursive: true, force: true });
        throw error;
      }
      const copy: PrivateCopy = { version: made.version, dir: made.dir, memory, users: 0, retired: false };
      if (this.#copy !== current || this.#closed) {
        // Another read replaced the copy meanwhile; use ours once and let it go.
        copy.retired = true;
        return copy;
      }
      if (current !== undefined) {
        current.retired = true;
        if (current.users === 0) await dropCopy(current);
      }
      this.#copy = copy;
      return copy;
    }
    return undefined;
  }

  /** A copy of the file in a private directory, only if nobody changed it (or opened a WAL) meanwhile. */
  #copyFile(): { file: string; dir: string; version: string } | undefined {
    const dir = mkdtempSync(join(tmpdir(), 'witness-view-'));
    const file = join(dir, 'memory.db');
    let kept = false;
    try {
      const source = openSync(this.#path, 'r');
      let before: string;
      let after: string;
      try {
        before = fileVersion(fstatSync(source, { bigint: true }));
        copyFileSync(this.#path, file);
        after = fileVersion(fstatSync(source, { bigint: true }));
      } finally {
        closeSync(source);
      }
      if (before !== after || existsSync(`${this.#path}-wal`)) return undefined;
      // The header marks a WAL database (bytes 18-19 = 2), which SQLite would read only with a -wal file
      // beside it; the copy is private and never written, so it is marked a rollback-journal database (the
      // pages are unchanged).
      const copy = openSync(file, 'r+');
      try {
        const header = Buffer.alloc(2);
        if (readSync(copy, header, 0, 2, 18) === 2 && header[0] === 2 && header[1] === 2) {
          writeSync(copy, Buffer.from([1, 1]), 0, 2, 18);
        }
      } finally {
        closeSync(copy);
      }
      kept = true;
      return { file, dir, version: before };
    } finally {
      if (!kept) rmSync(dir, { recursive: true, force: true });
    }
  }

  async #open(connect: () => Database.Database): Promise<Memory> {
    let database: Database.Database;
    try {
      database = connect();
    } catch (error) {
      throw new MemoryUnavailableError(
        `cannot open the SQLite database ${JSON.stringify(this.#path)} read-only: ${(error as Error).message}`,
        { cause: error },
      );
    }
    const db = new Kysely<Tables>({ dialect: new SqliteDialect({ database }) });
    return checkedMemory(db, 'sqlite', this.location);
  }
}

async function dropCopy(copy: PrivateCopy): Promise<void> {
  try {
    await copy.memory.close();
  } finally {
    rmSync(copy.dir, { recursive: true, force: true });
  }
}

async function openPostgresReader(url: string): Promise<MemoryReader> {
  const pool = new pg.Pool({ connectionString: url, connectionTimeoutMillis: 30_000 });
  pool.on('error', () => {});
  // Every session is read-only before its first query (pg runs queued queries in order).
  pool.on('connect', (client) => {
    client.query('set session characteristics as transaction read only').catch(() => {});
  });
  const location: MemoryLocation = { backend: 'postgres', target: redactUrl(url) };
  const memory = await checkedMemory(
    new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) }),
    'postgres',
    location,
  );
  return {
    location,
    read: (work) => work(memory),
    close: () => memory.close(),
  };
}

/** A memory over `db` once its schema is the one this Witness reads; `db` is destroyed otherwise. */
async function checkedMemory(
  db: Kysely<Tables>,
  backend: 'sqlite' | 'postgres',
  location: MemoryLocation,
): Promise<Memory> {
  try {
    let version: number | undefined;
    try {
      const result = await sql<{ version: number }>`select version from witness_schema where id = 1`.execute(
        db,
      );
      version = result.rows[0]?.version;
    } catch (error) {
      if (!/witness_schema/.test((error as Error).message)) throw error;
    }
    if (version === undefined) {
      throw new MemoryUnavailableError(
        `${location.target} is not a Witness memory (it has no witness_schema table): name the database \`witness run\` stored into`,
      );
    }
    if (version > MEMORY_SCHEMA_VERSION) {
      throw new SchemaTooNewError(
        `the database was written by a newer Witness (memory schema version ${version}; this version reads up to ${MEMORY_SCHEMA_VERSION}); upgrade Witness to view it`,
        version,
        MEMORY_SCHEMA_VERSION,
      );
    }
    if (version < MEMORY_SCHEMA_VERSION) {
      throw new MemoryUnavailableError(
        `${location.target} was written by an older Witness (memory schema version ${version}, current ${MEMORY_SCHEMA_VERSION}); reading never migrates: open it once with another witness command (for example \`witness scores list --db ...\`), which upgrades it`,
      );
    }
  } catch (error) {
    await db.destroy();
    if (error instanceof WitnessError) throw error;
    throw new MemoryUnavailableError(`cannot read ${location.target}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  return new SqlMemory(db, backend, location, () => new Date().toISOString());
}
