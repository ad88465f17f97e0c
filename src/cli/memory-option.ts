import { Option } from 'commander';
import { NoMemoryError, NotFoundError } from '../errors.js';
import type { Memory } from '../memory/memory.js';
import { UsageError } from './usage-error.js';

/**
 * Where the CLI keeps its memory: `--db`, else the WITNESS_DB environment variable, else `./witness.db`
 * (a SQLite file, created on first use). A `postgres://` URL selects PostgreSQL.
 */

export const DEFAULT_DB = './witness.db';
export const DB_ENV = 'WITNESS_DB';

export function dbOption(): Option {
  return new Option(
    '--db <path-or-url>',
    `the memory: a SQLite file or a postgres:// URL (default: $${DB_ENV}, else ${DEFAULT_DB})`,
  );
}

/** For commands that only read the memory: it must exist (a typo must not create an empty database). */
export const READ_ONLY = { mustExist: true } as const;

/** For commands that work on the memory: --db, else WITNESS_DB, else ./witness.db. */
export function resolveDb(options: Record<string, unknown>, env: CliEnv): string {
  return optionalDb(options, env) ?? DEFAULT_DB;
}

/** For commands where storing is optional (`score`, `replay <file>`): only a db the caller named. */
export function optionalDb(options: Record<string, unknown>, env: CliEnv): string | undefined {
  if (typeof options.db === 'string') return options.db;
  const fromEnv = env[DB_ENV];
  return fromEnv === undefined || fromEnv === '' ? undefined : fromEnv;
}

/**
 * Opens the memory, runs `work`, and always closes it (a PostgreSQL pool would keep the process alive).
 * A record that is not stored becomes a usage error that says which database was searched.
 */
export async function withMemory<T>(
  target: string,
  work: (memory: Memory) => Promise<T>,
  options: { mustExist?: boolean } = {},
): Promise<T> {
  // Loaded on first use: the database drivers are most of the CLI's start-up time, and commands that
  // store nothing (observe, score without --db) never need them.
  const { openMemory } = await import('../memory/open-memory.js');
  let memory: Memory;
  try {
    memory = await openMemory(target, { mustExist: options.mustExist === true });
  } catch (error) {
    if (error instanceof NoMemoryError) {
      throw new UsageError(
        `${error.message}; check --db (or ${DB_ENV}): \`witness run\`, \`witness score --db\` and \`witness import\` create one, reading commands never do`,
      );
    }
    throw error;
  }
  try {
    return await work(memory);
  } catch (error) {
    if (error instanceof NotFoundError) {
      throw new UsageError(
        `${error.message} in ${memory.location.target}; check --db (or ${DB_ENV}), and list what it holds with \`witness scores list\``,
      );
    }
    throw error;
  } finally {
    await memory.close();
  }
}

export type CliEnv = Readonly<Record<string, string | undefined>>;
