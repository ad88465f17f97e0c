import { type Kysely, sql } from 'kysely';
import { AttackResultSchema } from '../models/attack-result.js';
import { CampaignRunSchema } from '../models/campaign-run.js';
import { ConversationSchema, MessagePieceSchema } from '../models/conversation.js';
import type { Observation } from '../models/observation.js';
import { ScoreSchema } from '../models/score.js';
import type { ArchiveRecord } from './archive.js';
import { loadObservations } from './evidence-contents.js';
import { linksByObservation, parseStored, parseStoredRows } from './store-records.js';
import type { Tables } from './tables.js';

/** Rows per query while exporting: what an export holds at a time. */
const EXPORT_PAGE_ROWS = 200;

/**
 * Every record of the memory, in an order that imports cleanly (conversations, message pieces,
 * observations with their message links, scores, campaign runs, attack results), from one read snapshot
 * (internal; `Memory.exportRecords` is the public form). Each group is read a page at a time in the order
 * of an indexed key, each page starting after the last key of the one before (never at an offset, which
 * costs a scan of every row before it), so an export holds one page and its cost grows with the memory:
 * conversations and observations by id (no index orders them by time), message pieces by their place in
 * their conversation, scores, runs and attack results by time, then id.
 */
export async function* exportRecords(db: Kysely<Tables>): AsyncGenerator<ArchiveRecord> {
  // One snapshot for the whole export, so records written meanwhile never appear half-linked.
  const trx = await db
    .startTransaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute();
  let finished = false;
  try {
    for await (const rows of keysetPages(trx, 'conversations', ['id'])) {
      for (const row of rows) {
        yield {
          recordType: 'conversation',
          record: parseStored(ConversationSchema, row.record_json, 'conversation'),
        };
      }
    }
    for await (const rows of keysetPages(trx, 'message_pieces', ['conversation_id', 'turn', 'sequence'])) {
      for (const row of rows) {
        yield {
          recordType: 'message_piece',
          record: parseStored(MessagePieceSchema, row.record_json, 'message piece'),
        };
      }
    }
    for await (const rows of keysetPages(trx, 'observations', ['id'], ['record_json', 'parts'])) {
      const observations = rows.map((row) => ({
        id: String(row.id),
        record_json: row.record_json,
        parts: (row.parts ?? null) as string | null,
      }));
      const links = await linksByObservation(
        trx,
        observations.map((row) => row.id),
      );
      const records = await loadObservations(trx, observations);
      for (const [i, row] of observations.entries()) {
        yield {
          recordType: 'observation',
          record: records[i] as Observation,
          messagePieceIds: links.get(row.id) ?? [],
        };
      }
    }
    for await (const rows of keysetPages(trx, 'scores', ['created_at', 'id'], ['record_json', 'parts'])) {
      for (const record of await parseStoredRows(trx, ScoreSchema, storedRows(rows), 'score')) {
        yield { recordType: 'score', record };
      }
    }
    for await (const rows of keysetPages(trx, 'runs', ['started_at', 'id'])) {
      for (const row of rows) {
        yield { recordType: 'run', record: parseStored(CampaignRunSchema, row.record_json, 'campaign run') };
      }
    }
    for await (const rows of keysetPages(
      trx,
      'attack_results',
      ['created_at', 'id'],
      ['record_json', 'parts'],
    )) {
      for (const record of await parseStoredRows(
        trx,
        AttackResultSchema,
        storedRows(rows),
        'attack result',
      )) {
        yield { recordType: 'attack_result', record };
      }
    }
    finished = true;
  } finally {
    if (finished) await trx.commit().execute();
    else await trx.rollback().execute();
  }
}

type ExportedTable =
  | 'conversations'
  | 'message_pieces'
  | 'observations'
  | 'scores'
  | 'runs'
  | 'attack_results';

type KeyedRow = { record_json: string } & Record<string, unknown>;

/** A page's stored JSON with the parts kept apart from it (record-parts.ts), as the readers take them. */
function storedRows(rows: readonly KeyedRow[]): { record_json: string; parts: string | null }[] {
  return rows.map((row) => ({ record_json: row.record_json, parts: (row.parts ?? null) as string | null }));
}

/**
 * The rows of `table` (its keys and `columns`) a page at a time, ordered by `keys` (an indexed, unique
 * combination), each page after the last row of the one before: `(k1, k2) > (v1, v2)`, a row-value comparison both SQLite and
 * PostgreSQL answer from the index.
 */
async function* keysetPages(
  trx: Kysely<Tables>,
  table: ExportedTable,
  keys: readonly string[],
  columns: readonly string[] = ['record_json'],
): AsyncGenerator<KeyedRow[]> {
  let after: unknown[] | undefined;
  for (;;) {
    const keyList = sql.join(keys.map((key) => sql.ref(key)));
    const start = after === undefined ? sql`` : sql`where (${keyList}) > (${sql.join(after)})`;
    const order = sql.join(keys.map((key) => sql`${sql.ref(key)} asc`));
    const selected = sql.join(
      [...keys, ...columns.filter((column) => !keys.includes(column))].map((column) => sql.ref(column)),
    );
    const result =
      await sql<KeyedRow>`select ${selected} from ${sql.table(table)} ${start} order by ${order} limit ${EXPORT_PAGE_ROWS}`.execute(
        trx,
      );
    const rows = result.rows;
    if (rows.length > 0) yield rows;
    if (rows.length < EXPORT_PAGE_ROWS) return;
    const last = rows[rows.length - 1] as KeyedRow;
    after = keys.map((key) => last[key]);
  }
}
