import type { Transaction } from 'kysely';
import type * as z from 'zod';
import { InvalidRecordError } from '../errors.js';
import { AttackResultSchema } from '../models/attack-result.js';
import { CampaignRunSchema } from '../models/campaign-run.js';
import { ConversationSchema, MessagePieceSchema } from '../models/conversation.js';
import { ObservationSchema } from '../models/observation.js';
import { parseRecord } from '../models/record.js';
import { type Score, ScoreSchema } from '../models/score.js';
import {
  type ArchiveRecord,
  emptyImportSummary,
  type ImportSummary,
  isValidatedArchiveRecord,
} from './archive.js';
import { loadObservations } from './evidence-contents.js';
import { exportRecords } from './export-records.js';
import { upgradeLegacyAttackResult } from './legacy-attack-results.js';
import type { SqlContext } from './sql-context.js';
import {
  assertSameLinks,
  storeAttackResult,
  storeConversation,
  storeMessagePiece,
  storeObservation,
  storeRun,
  storeScore,
} from './store-records.js';
import type { Tables } from './tables.js';
import { scoreContradiction } from './verify-imported-scores.js';

/**
 * Export and import of every record (internal): see `archive.ts` for the format. An import runs in one
 * transaction (all records or none) and takes its records one at a time as they are read, so it holds
 * one record, whatever the archive's size. Each record is validated once: where `parseArchiveLines`
 * already did it, not again here.
 */
export class SqlArchive {
  readonly #sql: SqlContext;

  constructor(sql: SqlContext) {
    this.#sql = sql;
  }

  exportRecords(): AsyncGenerator<ArchiveRecord> {
    this.#sql.assertOpen();
    return exportRecords(this.#sql.db);
  }

  async importRecords(
    records: AsyncIterable<ArchiveRecord> | Iterable<ArchiveRecord>,
  ): Promise<ImportSummary> {
    const summary = emptyImportSummary();
    await this.#sql.write(async (trx) => {
      for await (const record of records) {
        await storeArchiveRecord(trx, record, !isValidatedArchiveRecord(record));
        summary[record.recordType]++;
      }
    });
    return summary;
  }
}

/**
 * Stores one archive record. `validate`: check the record against its schema first; records that
 * `parseArchiveLines` made were checked as they were parsed, and are not checked a second time.
 */
async function storeArchiveRecord(
  trx: Transaction<Tables>,
  record: ArchiveRecord,
  validate: boolean,
): Promise<void> {
  const valid = <S extends z.ZodType>(schema: S, what: string): z.output<S> =>
    validate ? parseRecord(schema, record.record, what) : (record.record as z.output<S>);
  switch (record.recordType) {
    case 'conversation':
      await storeConversation(trx, valid(ConversationSchema, 'conversation'));
      break;
    case 'message_piece':
      await storeMessagePiece(trx, valid(MessagePieceSchema, 'message piece'));
      break;
    case 'observation': {
      const observation = valid(ObservationSchema, 'observation');
      const inserted = await storeObservation(trx, observation, record.messagePieceIds);
      if (!inserted) await assertSameLinks(trx, observation.id, record.messagePieceIds);
      break;
    }
    case 'score': {
      const score = valid(ScoreSchema, 'score');
      await assertScoreHolds(trx, score);
      await storeScore(trx, score);
      break;
    }
    case 'run':
      await storeRun(trx, valid(CampaignRunSchema, 'campaign run'));
      break;
    case 'attack_result': {
      // An export made before runs had their own table carries each run inside its results.
      const { result, run } = upgradeLegacyAttackResult(valid(AttackResultSchema, 'attack result'));
      if (run !== null) await storeRun(trx, run);
      await storeAttackResult(trx, result);
      break;
    }
  }
}

/** A score resting on one observation must not contradict it (see `verify-imported-scores.ts`). */
async function assertScoreHolds(trx: Transaction<Tables>, score: Score): Promise<void> {
  const [observationId, ...more] = score.observationIds;
  if (observationId === undefined || more.length > 0) return;
  const rows = await trx
    .selectFrom('observations')
    .select(['id', 'record_json', 'parts'])
    .where('id', '=', observationId)
    .execute();
  const [observation] = await loadObservations(trx, rows);
  if (observation === undefined) return;
  const problem = scoreContradiction(score, observation);
  if (problem !== undefined) {
    throw new InvalidRecordError(
      `score ${JSON.stringify(score.id)} contradicts its evidence: ${problem}; nothing was imported`,
    );
  }
}
