import { createHash } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { InvalidRecordError } from '../errors.js';
import type { Tables } from './tables.js';

/** A connection or a transaction (sql-context.ts's Db, named here: the migrations import this module). */
type Db = Kysely<Tables> | Transaction<Tables>;

/**
 * Parts of records stored once per distinct JSON (internal). A campaign's attempts repeat most of what
 * they record: every attempt of an attack starts from the same template (its baseline manifest's entries
 * are the same), a mock or a deterministic agent writes the same files (the final entries and the change
 * list are the same), the target, the transcript, the scorer's expectation and its wording are the same.
 * Stored inline, that is most of a record, once per attempt. So the subtrees at the paths below are kept
 * apart, in `record_parts`, keyed by the sha256 of their JSON text, and the record's row holds null at each
 * such path and names the part per path in its `parts` column (`{"changes.0.baseline.entries": 17}`).
 * Reads put the parts back before the record is parsed with its schema, so every reader sees the record
 * exactly as it was stored (the part's text is the subtree's own `JSON.stringify`, byte for byte).
 *
 * What stays in the row is what differs per attempt (ids, times, the attempt's directory, durations) and
 * what SQL reads (`reply`, `error`, an observation's coverage). The key is always computed here from the
 * text, never taken from the record; a part changed behind Witness's back (text that no longer hashes to
 * its key) is an {@link InvalidRecordError} on read, never data.
 */

/** Where a path's array segment stands for every element. */
const EVERY = '*';

/** Attack results: the bulk of an attempt's record, most of it the same from attempt to attempt. */
export const ATTACK_RESULT_PARTS = [
  'target',
  'transcript',
  'shownPaths',
  'adaptation',
  'task.rationale',
  'changes.*.baseline.sourceIdentifier',
  'changes.*.baseline.entries',
  'changes.*.baseline.lookups',
  'changes.*.baseline.metadata.stats',
  'changes.*.final.sourceIdentifier',
  'changes.*.final.entries',
  'changes.*.final.lookups',
  'changes.*.final.metadata.stats',
  'changes.*.changeSet.changes',
  'changes.*.changeSet.undecided',
  'changes.*.changeSet.lookups',
  'network',
] as const;

/** Scores: who judged, against what, and in which words. */
export const SCORE_PARTS = ['scorer', 'scoredExpectation', 'description', 'rationale', 'metadata'] as const;

/** Observations: the source (shared with the attempt's manifests), the scope and the reading's counts. */
export const OBSERVATION_PARTS = ['sourceIdentifier', 'payload.scope', 'metadata.stats'] as const;

/** Subtrees shorter than this (JSON characters) stay inline: a part and its reference would cost more. */
export const PART_MIN_CHARS = 48;

/** Rows per statement (well under SQLite's and PostgreSQL's limits on bound parameters). */
const ROWS_PER_STATEMENT = 200;

export interface SplitRecord {
  /** The record's JSON with each part replaced by null. */
  json: string;
  /** Per part: its concrete path (`changes.0.baseline.entries`), its JSON text and that text's sha256. */
  parts: { path: string; json: string; sha256: string }[];
}

/** Takes the parts at `paths` out of a record (which is left as it is). */
export function splitParts(record: object, paths: readonly string[]): SplitRecord {
  const copy = JSON.parse(JSON.stringify(record)) as unknown;
  const parts: SplitRecord['parts'] = [];
  for (const pattern of paths) {
    for (const [path, holder, key] of locate(copy, pattern.split('.'), [])) {
      const value = (holder as Record<string, unknown>)[key];
      if (value === null || value === undefined || typeof value === 'number' || typeof value === 'boolean') {
        continue;
      }
      const json = JSON.stringify(value);
      if (json.length < PART_MIN_CHARS) continue;
      parts.push({ path, json, sha256: sha256Hex(json) });
      (holder as Record<string, unknown>)[key] = null;
    }
  }
  return { json: JSON.stringify(copy), parts };
}

/** The `[concrete path, holder, key]` of each node a pattern names in `value` (arrays expand at `*`). */
function locate(
  value: unknown,
  segments: readonly string[],
  prefix: readonly string[],
): [string, object, string | number][] {
  const [head, ...rest] = segments;
  if (head === undefined || value === null || typeof value !== 'object') return [];
  if (head === EVERY) {
    if (!Array.isArray(value)) return [];
    return value.flatMap((element, index) => {
      if (rest.length === 0) return [[[...prefix, index].join('.'), value, index]];
      return locate(element, rest, [...prefix, String(index)]);
    }) as [string, object, string | number][];
  }
  if (Array.isArray(value) || !Object.hasOwn(value, head)) return [];
  if (rest.length === 0) return [[[...prefix, head].join('.'), value, head]];
  return locate((value as Record<string, unknown>)[head], rest, [...prefix, head]);
}

/**
 * Stores a record's parts (each distinct text once) and returns the value of its row's `parts` column:
 * null when it has none.
 */
export async function storeParts(trx: Transaction<Tables>, split: SplitRecord): Promise<string | null> {
  if (split.parts.length === 0) return null;
  const ids = await partIds(trx, split.parts);
  const column: Record<string, number> = {};
  for (const part of split.parts) column[part.path] = ids.get(part.sha256) as number;
  return JSON.stringify(column);
}

/** The id of each part, inserting those not stored yet. */
async function partIds(
  trx: Transaction<Tables>,
  parts: readonly { json: string; sha256: string }[],
): Promise<Map<string, number>> {
  const texts = new Map(parts.map((part) => [part.sha256, part.json]));
  const ids = await storedIds(trx, [...texts.keys()]);
  const missing = [...texts].filter(([sha256]) => !ids.has(sha256));
  if (missing.length > 0) {
    await trx
      .insertInto('record_parts')
      .values(missing.map(([sha256, json]) => ({ sha256, json })))
      .onConflict((oc) => oc.column('sha256').doNothing())
      .execute();
    // Read back rather than RETURNING: a concurrent writer may have stored some of them first.
    for (const [sha256, id] of await storedIds(
      trx,
      missing.map(([sha256]) => sha256),
    )) {
      ids.set(sha256, id);
    }
  }
  for (const sha256 of texts.keys()) {
    if (!ids.has(sha256)) throw new Error(`record part ${sha256} was stored but cannot be read back (a bug)`);
  }
  return ids;
}

async function storedIds(db: Db, sha256s: readonly string[]): Promise<Map<string, number>> {
  const ids = new Map<string, number>();
  for (let i = 0; i < sha256s.length; i += ROWS_PER_STATEMENT) {
    const rows = await db
      .selectFrom('record_parts')
      .select(['id', 'sha256'])
      .where('sha256', 'in', sha256s.slice(i, i + ROWS_PER_STATEMENT))
      .execute();
    for (const row of rows) ids.set(row.sha256, Number(row.id));
  }
  return ids;
}

/** A stored row of a record that may have parts kept apart. */
export interface RowWithParts {
  record_json: string;
  parts: string | null;
}

/**
 * The rows' records as plain values (not yet parsed with their schema), each part put back at its path.
 * `what(i)` names the i-th record in errors. Each distinct part is read and parsed once per call.
 */
export async function joinParts(
  db: Db,
  rows: readonly RowWithParts[],
  what: (index: number) => string,
): Promise<unknown[]> {
  const columns = rows.map((row, index) => (row.parts === null ? null : partsColumn(row.parts, what(index))));
  const wanted = new Set<number>();
  for (const column of columns) for (const id of Object.values(column ?? {})) wanted.add(id);
  const texts = await partTexts(db, [...wanted]);
  const values = new Map<number, unknown>();
  return rows.map((row, index) => {
    const value = parseJson(row.record_json, what(index));
    const column = columns[index];
    if (column === null || column === undefined) return value;
    for (const [path, id] of Object.entries(column)) {
      const text = texts.get(id);
      if (text === undefined) {
        throw new InvalidRecordError(
          `stored ${what(index)} names record part ${id}, which is not stored; the database was changed outside Witness`,
        );
      }
      if (!values.has(id)) values.set(id, parseJson(text, `record part ${id}`));
      // Each place gets its own copy: a reader may change one record without changing the others.
      place(value, path, structuredClone(values.get(id)), what(index));
    }
    return value;
  });
}

function partsColumn(text: string, what: string): Record<string, number> {
  const value = parseJson(text, `parts of ${what}`);
  if (
    value === null ||
    typeof value !== 'object' ||
    Array.isArray(value) ||
    Object.values(value).some((id) => !Number.isSafeInteger(id))
  ) {
    throw new InvalidRecordError(
      `stored ${what} names its parts in a form Witness does not write; the database was changed outside Witness`,
    );
  }
  return value as Record<string, number>;
}

async function partTexts(db: Db, ids: readonly number[]): Promise<Map<number, string>> {
  const texts = new Map<number, string>();
  for (let i = 0; i < ids.length; i += ROWS_PER_STATEMENT) {
    const rows = await db
      .selectFrom('record_parts')
      .select(['id', 'sha256', 'json'])
      .where('id', 'in', ids.slice(i, i + ROWS_PER_STATEMENT))
      .execute();
    for (const row of rows) {
      if (sha256Hex(row.json) !== row.sha256) {
        throw new InvalidRecordError(
          `stored record part ${row.sha256} no longer has that digest; the database was changed outside Witness`,
        );
      }
      texts.set(Number(row.id), row.json);
    }
  }
  return texts;
}

/** Puts `part` at `path` of `value`, where the stored row holds null. */
function place(value: unknown, path: string, part: unknown, what: string): void {
  const segments = path.split('.');
  const key = segments.pop() as string;
  let holder: unknown = value;
  for (const segment of segments) {
    holder =
      holder !== null && typeof holder === 'object'
        ? (holder as Record<string, unknown>)[Array.isArray(holder) ? Number(segment) : segment]
        : undefined;
  }
  const index = Array.isArray(holder) ? Number(key) : key;
  if (
    holder === null ||
    typeof holder !== 'object' ||
    !Object.hasOwn(holder, index) ||
    (holder as Record<string | number, unknown>)[index] !== null
  ) {
    throw new InvalidRecordError(
      `stored ${what} names a part at ${path}, which has no place for it; the database was changed outside Witness`,
    );
  }
  (holder as Record<string | number, unknown>)[index] = part;
}

function parseJson(json: string, what: string): unknown {
  try {
    return JSON.parse(json);
  } catch (error) {
    // A row edited outside Witness: the documented error, never a bare SyntaxError.
    throw new InvalidRecordError(
      `stored ${what} is not JSON (${(error as Error).message}); the database was changed outside Witness`,
    );
  }
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** Rows per read while the migration rewrites what was stored before. */
const BACKFILL_PAGE_ROWS = 500;

/**
 * The migration's data step: each attack result, score and observation stored before parts were kept
 * apart gets them kept apart now, exactly as if it had been stored today (its JSON is split as it is
 * stored, without being parsed into a record, so a row that a newer schema would refuse is not lost).
 */
export async function splitStoredRecords(trx: Transaction<Tables>): Promise<void> {
  const plans = [
    ['attack_results', ATTACK_RESULT_PARTS],
    ['scores', SCORE_PARTS],
    ['observations', OBSERVATION_PARTS],
  ] as const;
  for (const [table, paths] of plans) {
    let last: string | undefined;
    for (;;) {
      let query = trx
        .selectFrom(table)
        .select(['id', 'record_json'])
        .where('parts', 'is', null)
        .orderBy('id')
        .limit(BACKFILL_PAGE_ROWS);
      if (last !== undefined) query = query.where('id', '>', last);
      const rows = await query.execute();
      for (const row of rows) {
        let value: unknown;
        try {
          value = JSON.parse(row.record_json);
        } catch {
          continue; // Not JSON: left as it is, for the read to report.
        }
        if (value === null || typeof value !== 'object') continue;
        const split = splitParts(value, paths);
        if (split.parts.length === 0) continue;
        const parts = await storeParts(trx, split);
        await trx
          .updateTable(table)
          .set({ record_json: split.json, parts })
          .where('id', '=', row.id)
          .execute();
      }
      if (rows.length < BACKFILL_PAGE_ROWS) break;
      last = (rows[rows.length - 1] as { id: string }).id;
    }
  }
}
