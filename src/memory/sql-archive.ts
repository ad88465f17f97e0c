import { AttackResultSchema } from '../models/attack-result.js';
import { CampaignRunSchema } from '../models/campaign-run.js';
import { ConversationSchema, MessagePieceSchema } from '../models/conversation.js';
import { ObservationSchema } from '../models/observation.js';
import { parseRecord } from '../models/record.js';
import { ScoreSchema } from '../models/score.js';
import { type ArchiveRecord, emptyImportSummary, type ImportSummary } from './archive.js';
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

/** Export and import of every record (internal): see `archive.ts` for the format. */
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
        switch (record.recordType) {
          case 'conversation':
            await storeConversation(trx, parseRecord(ConversationSchema, record.record, 'conversation'));
            break;
          case 'message_piece':
            await storeMessagePiece(trx, parseRecord(MessagePieceSchema, record.record, 'message piece'));
            break;
          case 'observation': {
            const observation = parseRecord(ObservationSchema, record.record, 'observation');
            const inserted = await storeObservation(trx, observation, record.messagePieceIds);
            if (!inserted) await assertSameLinks(trx, observation.id, record.messagePieceIds);
            break;
          }
          case 'score':
            await storeScore(trx, parseRecord(ScoreSchema, record.record, 'score'));
            break;
          case 'run':
            await storeRun(trx, parseRecord(CampaignRunSchema, record.record, 'campaign run'));
            break;
          case 'attack_result': {
            // An export made before runs had their own table carries each run inside its results.
            const { result, run } = upgradeLegacyAttackResult(
              parseRecord(AttackResultSchema, record.record, 'attack result'),
            );
            if (run !== null) await storeRun(trx, run);
            await storeAttackResult(trx, result);
            break;
          }
        }
        summary[record.recordType]++;
      }
    });
    return summary;
  }
}
