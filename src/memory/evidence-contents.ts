import { createHash } from 'node:crypto';
import type { Transaction } from 'kysely';
import { InvalidRecordError } from '../errors.js';
import { type Observation, ObservationSchema } from '../models/observation.js';
import { parseRecord } from '../models/record.js';
import { joinParts } from './record-parts.js';
import type { Db } from './sql-context.js';
import type { Tables } from './tables.js';

/**
 * Evidence content stored once per distinct content (internal). The text an observation retained of a
 * file is the bulk of the evidence: a campaign whose attempts all read the same 40 KB file would store it
 * once per attempt. So each retained text of at least {@link INLINE_CONTENT_MAX_BYTES} bytes is kept
 * apart, in `evidence_contents`, keyed by the sha256 of its UTF-8 bytes, and the observation's row names
 * it per entry (`observation_contents`); the observation's own JSON holds `content: null` for that entry.
 * Reads put the text back before the record is parsed with its schema, so every reader (replay, export,
 * the viewer) sees the observation exactly as it was stored.
 *
 * The bytes are stored as bytes (a BLOB, a bytea), never as JSON text: a file of control characters is
 * valid UTF-8, and JSON writes each such byte as a six-character escape, so a 16 MB read cost about 96 MB
 * of stored JSON. Stored raw it costs its own size, once.
 *
 * The key is always computed here from the text itself, never taken from the entry's `sha256` (the digest
 * of the whole file, which a forged record imported from an archive may not match): otherwise an imported
 * record could plant its text under the digest of a file a later honest attempt reads, and that attempt's
 * evidence would read back as the forger's text. A row changed behind Witness's back (bytes that no longer
 * hash to their key) is an {@link InvalidRecordError} on read, never data.
 */

/** Retained texts shorter than this (UTF-8 bytes) stay inline: a row of their own would cost more. */
export const INLINE_CONTENT_MAX_BYTES = 256;

/** Rows per statement (well under SQLite's and PostgreSQL's limits on bound parameters). */
const ROWS_PER_STATEMENT = 200;

export interface SplitObservation {
  /** The observation's JSON with each content kept apart replaced by null. */
  json: string;
  /** Per entry kept apart: its index in `payload.entries`, the key, the bytes. */
  contents: { entryIndex: number; sha256: string; bytes: Buffer }[];
}

/** `String.prototype.isWellFormed` (Node ≥ 20; not yet in the compiler's lib). */
const isWellFormed = (text: string): boolean =>
  (text as unknown as { isWellFormed(): boolean }).isWellFormed();

/**
 * Takes the long retained texts out of an observation. A text holding an unpaired surrogate (possible
 * only in a forged record) stays inline: its UTF-8 encoding would not decode back to the same string.
 */
export function splitContents(record: Observation): SplitObservation {
  const contents: SplitObservation['contents'] = [];
  const entries = record.payload.entries.map((entry, entryIndex) => {
    const text = entry.content;
    if (text === null || text.length * 3 < INLINE_CONTENT_MAX_BYTES) return entry;
    const bytes = Buffer.from(text, 'utf8');
    if (bytes.length < INLINE_CONTENT_MAX_BYTES || !isWellFormed(text)) return entry;
    contents.push({ entryIndex, sha256: sha256Hex(bytes), bytes });
    return { ...entry, content: null };
  });
  if (contents.length === 0) return { json: JSON.stringify(record), contents };
  const stored = { ...record, payload: { ...record.payload, entries } };
  return { json: JSON.stringify(stored), contents };
}

/** Stores the contents of a newly inserted observation (each distinct content once) and its links. */
export async function storeContents(
  trx: Transaction<Tables>,
  observationId: string,
  contents: SplitObservation['contents'],
): Promise<void> {
  if (contents.length === 0) return;
  const distinct = new Map(contents.map((content) => [content.sha256, content.bytes]));
  const rows = [...distinct].map(([sha256, bytes]) => ({ sha256, bytes }));
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
    await trx
      .insertInto('evidence_contents')
      .values(rows.slice(i, i + ROWS_PER_STATEMENT))
      .onConflict((oc) => oc.column('sha256').doNothing())
      .execute();
  }
  const links = contents.map((content) => ({
    observation_id: observationId,
    entry_index: content.entryIndex,
    content_sha256: content.sha256,
  }));
  for (let i = 0; i < links.length; i += ROWS_PER_STATEMENT) {
    await trx
      .insertInto('observation_contents')
      .values(links.slice(i, i + ROWS_PER_STATEMENT))
      .execute();
  }
}

/**
 * Observations read back whole from their rows: each content kept apart is put back into its entry, then
 * the record is parsed with its schema. Rows stored before contents were kept apart have no links and
 * are read as they are. Each distinct content is decoded once per call, so observations sharing a text
 * share one string.
 */
export async function loadObservations(
  db: Db,
  rows: readonly { id: string; record_json: string; parts: string | null }[],
): Promise<Observation[]> {
  const links = await contentsOf(
    db,
    rows.map((row) => row.id),
  );
  // The parts kept apart (record-parts.ts) go back first; the contents then go into the entries.
  const values = await joinParts(db, rows, (index) => `observation ${JSON.stringify(rows[index]?.id)}`);
  const texts = new Map<string, string>();
  return rows.map((row, index) => {
    const value = values[index];
    for (const link of links.get(row.id) ?? []) {
      let text = texts.get(link.sha256);
      if (text === undefined) {
        if (sha256Hex(link.bytes) !== link.sha256) {
          throw new InvalidRecordError(
            `stored content ${link.sha256} of observation ${JSON.stringify(row.id)} no longer has that digest; the database was changed outside Witness`,
          );
        }
        text = link.bytes.toString('utf8');
        texts.set(link.sha256, text);
      }
      const entry = entryAt(value, link.entryIndex);
      if (entry === undefined || entry.content !== null) {
        throw new InvalidRecordError(
          `stored observation ${JSON.stringify(row.id)} names content for entry ${link.entryIndex}, which has no place for it; the database was changed outside Witness`,
        );
      }
      entry.content = text;
    }
    return parseRecord(ObservationSchema, value, `stored observation ${row.id}`);
  });
}

interface ContentLink {
  entryIndex: number;
  sha256: string;
  bytes: Buffer;
}

async function contentsOf(db: Db, observationIds: readonly string[]): Promise<Map<string, ContentLink[]>> {
  const byObservation = new Map<string, ContentLink[]>();
  const ids = [...new Set(observationIds)];
  for (let i = 0; i < ids.length; i += ROWS_PER_STATEMENT) {
    const rows = await db
      .selectFrom('observation_contents')
      .innerJoin('evidence_contents', 'evidence_contents.sha256', 'observation_contents.content_sha256')
      .select([
        'observation_contents.observation_id',
        'observation_contents.entry_index',
        'evidence_contents.sha256',
        'evidence_contents.bytes',
      ])
      .where('observation_contents.observation_id', 'in', ids.slice(i, i + ROWS_PER_STATEMENT))
      .execute();
    for (const row of rows) {
      const list = byObservation.get(row.observation_id) ?? [];
      list.push({ entryIndex: row.entry_index, sha256: row.sha256, bytes: Buffer.from(row.bytes) });
      byObservation.set(row.observation_id, list);
    }
  }
  return byObservation;
}

/** The entry object at `index` of a parsed observation, when the JSON has one there. */
function entryAt(value: unknown, index: number): { content: unknown } | undefined {
  const entries = (value as { payload?: { entries?: unknown } } | null)?.payload?.entries;
  if (!Array.isArray(entries)) return undefined;
  const entry: unknown = entries[index];
  return typeof entry === 'object' && entry !== null && !Array.isArray(entry)
    ? (entry as { content: unknown })
    : undefined;
}

function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}
