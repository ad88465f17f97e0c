import { closeSync, existsSync, fstatSync, openSync, readFileSync, statSync } from 'node:fs';
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
 * - SQLite: a read-only connection to a WAL database *creates* the `-wal` and `-shm` files when they are
 *   absent and, being read-only, can never remove them again. So when no `-wal` file exists (no other
 *   connection is open) the reader loads a private in-memory copy of the file and checks, by its size and
 *   change times, that no writer touched the file while it was copied (else it copies again). Only when
 *   a writer is active (its `-wal` exists) does it open the file in place, read-only, for the duration of
 *   one `read` call. The copy is reused until the file changes. The one residual effect: a writer that
 *   closes during such a short in-place read leaves its `-wal`/`-shm` files behind (the next writer
 *   removes them), because SQLite deletes them only when the last connection closes.
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

const SNAPSHOT_ATTEMPTS = 5;

class SqliteReader implements MemoryReader {
  readonly location: MemoryLocation;
  readonly #path: string;
  #snapshot: { version: string; memory: Memory; users: number; retired: boolean } | undefined;
  #closed = false;

  constructor(path: string) {
    this.#path = path;
    this.location = { backend: 'sqlite', target: path };
  }

  async read<T>(work: (memory: Memory) => Promise<T>): Promise<T> {
    if (this.#closed) throw new MemoryUnavailableError('the memory reader is closed');
    this.#checkFile();
    if (!existsSync(`${this.#path}-wal`)) {
      const snapshot = await this.#currentSnapshot();
      if (snapshot !== undefined) {
        snapshot.users++;
        try {
          return await work(snapshot.memory);
        } finally {
          snapshot.users--;
          if (snapshot.retired && snapshot.users === 0) await snapshot.memory.close();
        }
      }
    }
    const memory = await this.#open(
      () => new Database(this.#path, { readonly: true, fileMustExist: true, timeout: 5_000 }),
    );
    try {
      return await work(memory);
    } finally {
      await memory.close();
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    const snapshot = this.#snapshot;
    this.#snapshot = undefined;
    if (snapshot !== undefined) {
      snapshot.retired = true;
      if (snapshot.users === 0) await snapshot.memory.close();
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

  /** The in-memory copy of the file as it is now; undefined when a writer kept changing it. */
  async #currentSnapshot() {
    for (let attempt = 0; attempt < SNAPSHOT_ATTEMPTS; attempt++) {
      const current = this.#snapshot;
      const version = fileVersion(statSync(this.#path, { bigint: true }));
      if (current !== undefined && current.version === version) return current;
      const copy = this.#copyFile();
      if (copy === undefined) continue;
      const memory = await this.#open(() => new Database(copy.bytes, { readonly: true }));
      if (this.#snapshot !== current) {
        // Another read replaced the snapshot meanwhile; use ours once and let it go.
        return { version: copy.version, memory, users: 0, retired: true };
      }
      if (current !== undefined) {
        current.retired = true;
        if (current.users === 0) await current.memory.close();
      }
      this.#snapshot = { version: copy.version, memory, users: 0, retired: false };
      return this.#snapshot;
    }
    return undefined;
  }

  /** The file's bytes, only if no writer changed it (or opened a WAL) while they were read. */
  #copyFile(): { bytes: Buffer; version: string } | undefined {
    const fd = openSync(this.#path, 'r');
    let bytes: Buffer;
    let before: string;
    let after: string;
    try {
      before = fileVersion(fstatSync(fd, { bigint: true }));
      bytes = readFileSync(fd);
      after = fileVersion(fstatSync(fd, { bigint: true }));
    } finally {
      closeSync(fd);
    }
    if (before !== after || existsSync(`${this.#path}-wal`)) return undefined;
    // The header marks a WAL database (bytes 18-19 = 2), which SQLite cannot open from memory; the copy
    // is private, so it is marked as a rollback-journal database instead (the pages are unchanged).
    if (bytes.length >= 20 && bytes[18] === 2 && bytes[19] === 2) {
      bytes[18] = 1;
      bytes[19] = 1;
    }
    return { bytes, version: before };
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
