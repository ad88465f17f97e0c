import type { Kysely } from 'kysely';
import { AttackResultSchema } from '../models/attack-result.js';
import { CampaignRunSchema } from '../models/campaign-run.js';
import { ConversationSchema, MessagePieceSchema } from '../models/conversation.js';
import type { Observation } from '../models/observation.js';
import { ScoreSchema } from '../models/score.js';
import type { ArchiveRecord } from './archive.js';
import { loadObservations } from './evidence-contents.js';
import { linksByObservation, parseStored } from './store-records.js';
import type { Tables } from './tables.js';

/** Rows per query while exporting. */
const EXPORT_PAGE_ROWS = 200;

/**
 * Every record of the memory, in an order that imports cleanly (conversations, message pieces,
 * observations with their message links, scores, campaign runs, attack results), each group sorted, from one read
 * snapshot (internal; `Memory.exportRecords` is the public form).
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
    for await (const json of recordsByCreation(trx, 'conversations')) {
      yield { recordType: 'conversation', record: parseStored(ConversationSchema, json, 'conversation') };
    }
    for await (const rows of pages((offset) =>
      trx
        .selectFrom('message_pieces')
        .select('record_json')
        .orderBy('conversation_id')
        .orderBy('turn')
        .orderBy('sequence')
        .limit(EXPORT_PAGE_ROWS)
        .offset(offset)
        .execute(),
    )) {
      for (const row of rows) {
        yield {
          recordType: 'message_piece',
          record: parseStored(MessagePieceSchema, row.record_json, 'message piece'),
        };
      }
    }
    for await (const rows of pages((offset) =>
      trx
        .selectFrom('observations')
        .select(['id', 'record_json'])
        .orderBy('observed_at')
        .orderBy('id')
        .limit(EXPORT_PAGE_ROWS)
        .offset(offset)
        .execute(),
    )) {
      const links = await linksByObservation(
        trx,
        rows.map((row) => row.id),
      );
      const records = await loadObservations(trx, rows);
      for (const [i, row] of rows.entries()) {
        yield {
          recordType: 'observation',
          record: records[i] as Observation,
          messagePieceIds: links.get(row.id) ?? [],
        };
      }
    }
    for await (const json of recordsByCreation(trx, 'scores')) {
      yield { recordType: 'score', record: parseStored(ScoreSchema, json, 'score') };
    }
    for await (const rows of pages((offset) =>
      trx
        .selectFrom('runs')
        .select('record_json')
        .orderBy('started_at')
        .orderBy('id')
        .limit(EXPORT_PAGE_ROWS)
        .offset(offset)
        .execute(),
    )) {
      for (const row of rows) {
        yield { recordType: 'run', record: parseStored(CampaignRunSchema, row.record_json, 'campaign run') };
      }
    }
    for await (const json of recordsByCreation(trx, 'attack_results')) {
      yield { recordType: 'attack_result', record: parseStored(AttackResultSchema, json, 'attack result') };
    }
    finished = true;
  } finally {
    if (finished) await trx.commit().execute();
    else await trx.rollback().execute();
  }
}

/** The stored JSON of a table whose rows are ordered by creation time, then id, page by page. */
async function* recordsByCreation(
  trx: Kysely<Tables>,
  table: 'conversations' | 'scores' | 'attack_results',
): AsyncGenerator<string> {
  for await (const rows of pages((offset) =>
    trx
      .selectFrom(table)
      .select('record_json')
      .orderBy('created_at')
      .orderBy('id')
      .limit(EXPORT_PAGE_ROWS)
      .offset(offset)
      .execute(),
  )) {
    for (const row of rows) yield row.record_json;
  }
}

async function* pages<T>(fetch: (offset: number) => Promise<T[]>): AsyncGenerator<T[]> {
  for (let offset = 0; ; offset += EXPORT_PAGE_ROWS) {
    const rows = await fetch(offset);
    if (rows.length > 0) yield rows;
    if (rows.length < EXPORT_PAGE_ROWS) return;
  }
}
