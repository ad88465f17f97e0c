import { ImmutableRecordError, InvalidReferenceError } from '../errors.js';
import { IMMUTABLE_MESSAGE_PREFIX, IMMUTABLE_SQLSTATE } from './migrations.js';

/**
 * Maps driver errors (better-sqlite3, pg) to typed Witness errors (internal). Constraint violations the
 * memory's own checks should have caught first still surface as typed errors, never as driver errors.
 */
export function translateSqlError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const code = (error as { code?: unknown }).code;
  if (code === IMMUTABLE_SQLSTATE || error.message.includes(`${IMMUTABLE_MESSAGE_PREFIX}:`)) {
    return new ImmutableRecordError(stripPrefix(error.message), { cause: error });
  }
  // SQLite: SQLITE_CONSTRAINT_FOREIGNKEY; PostgreSQL: 23503 foreign_key_violation.
  if (code === 'SQLITE_CONSTRAINT_FOREIGNKEY' || code === '23503') {
    return new InvalidReferenceError(`a record refers to one that is not stored (${error.message})`);
  }
  // SQLite: SQLITE_CONSTRAINT_PRIMARYKEY / _UNIQUE; PostgreSQL: 23505 unique_violation.
  if (code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === '23505') {
    return new ImmutableRecordError(`a different record is already stored there (${error.message})`, {
      cause: error,
    });
  }
  return error;
}

function stripPrefix(message: string): string {
  const at = message.indexOf(`${IMMUTABLE_MESSAGE_PREFIX}: `);
  return at < 0 ? message : message.slice(at + IMMUTABLE_MESSAGE_PREFIX.length + 2);
}
