import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { InvalidRecordError, InvalidReferenceError, NotFoundError } from '../errors.js';
import { type AttackResult, AttackResultSchema } from '../models/attack-result.js';
import {
  type Conversation,
  ConversationSchema,
  type MessagePiece,
  MessagePieceSchema,
} from '../models/conversation.js';
import { type Observation, ObservationSchema } from '../models/observation.js';
import { parseRecord } from '../models/record.js';
import { type Score, ScoreSchema } from '../models/score.js';
import type { ResolvedMessage } from '../scorers/scorer.js';
import { type ArchiveRecord, emptyImportSummary, type ImportSummary } from './archive.js';
import { exportRecords } from './export-records.js';
import type {
  AttackResultFilter,
  Memory,
  MemoryLocation,
  NewConversation,
  NewMessage,
  ScoreFilter,
} from './memory.js';
import type { Backend } from './migrations.js';
import { translateSqlError } from './sql-errors.js';
import {
  assertSameLinks,
  parseStored,
  quoteList,
  storeAttackResult,
  storeConversation,
  storeMessagePiece,
  storeObservation,
  storeScore,
} from './store-records.js';
import type { Tables } from './tables.js';

type Db = Kysely<Tables> | Transaction<Tables>;

/**
 * The {@link Memory} over one query layer (Kysely) for both backends (internal; open it with
 * `openMemory`). Each write is one transaction; on SQLite every write transaction starts with
 * `BEGIN IMMEDIATE`, so concurrent writers queue on the busy timeout instead of failing mid-transaction.
 */
export class SqlMemory implements Memory {
  readonly location: MemoryLocation;
  readonly #db: Kysely<Tables>;
  readonly #backend: Backend;
  readonly #now: () => string;
  #closed = false;

  constructor(db: Kysely<Tables>, backend: Backend, location: MemoryLocation, now: () => string) {
    this.#db = db;
    this.#backend = backend;
    this.location = location;
    this.#now = now;
  }

  async resolveMessage(pieceIds: readonly string[]): Promise<ResolvedMessage> {
    if (pieceIds.length === 0) {
      throw new InvalidReferenceError('a message scorable must name at least one message piece');
    }
    const wanted = [...new Set(pieceIds)];
    const rows = await this.#read((db) =>
      db
        .selectFrom('message_pieces')
        .select(['id', 'conversation_id', 'turn'])
        .where('id', 'in', wanted)
        .execute(),
    );
    const found = new Map(rows.map((row) => [row.id, row]));
    const missing = wanted.filter((id) => !found.has(id));
    if (missing.length > 0) {
      throw new NotFoundError(
        `message piece ${quoteList(missing)} is not stored in this memory; store the conversation's messages before scoring them`,
      );
    }
    const conversations = [...new Set(rows.map((row) => row.conversation_id))];
    if (conversations.length > 1) {
      throw new InvalidReferenceError(
        `message pieces ${quoteList(wanted)} belong to different conversations (${quoteList(conversations)}); a message scorable names the pieces of one message`,
      );
    }
    const turns = [...new Set(rows.map((row) => row.turn))].sort((a, b) => a - b);
    const conversationId = conversations[0] as string;
    if (turns.length > 1) {
      throw new InvalidReferenceError(
        `message pieces ${quoteList(wanted)} belong to different turns (${turns.join(', ')}) of conversation ${JSON.stringify(conversationId)}; a message scorable names the pieces of one message`,
      );
    }
    const turn = turns[0] as number;
    const message = await this.#read((db) =>
      db
        .selectFrom('message_pieces')
        .select('id')
        .where('conversation_id', '=', conversationId)
        .where('turn', '=', turn)
        .orderBy('sequence')
        .execute(),
    );
    const later = await this.#read((db) =>
      db
        .selectFrom('message_pieces')
        .select('id')
        .where('conversation_id', '=', conversationId)
        .where('turn', '>', turn)
        .limit(1)
        .execute(),
    );
    return { conversationId, turn, pieceIds: message.map((row) => row.id), hasLaterTurn: later.length > 0 };
  }

  async saveScore(score: Score, observations: readonly Observation[]): Promise<void> {
    const record = parseRecord(ScoreSchema, score, 'score');
    const evidence = observations.map((observation) =>
      parseRecord(ObservationSchema, observation, 'observation'),
    );
    const named = new Set(record.observationIds);
    for (const observation of evidence) {
      if (!named.has(observation.id)) {
        throw new InvalidReferenceError(
          `observation ${JSON.stringify(observation.id)} is not among the observationIds of score ${JSON.stringify(record.id)}; pass only the observations the score rests on`,
        );
      }
    }
    const linkedPieces = record.scorable.scorableType === 'message' ? record.scorable.pieceIds : [];
    await this.#write(async (trx) => {
      for (const observation of evidence) await storeObservation(trx, observation, linkedPieces);
      await storeScore(trx, record);
    });
  }

  async getObservation(id: string): Promise<Observation> {
    const row = await this.#read((db) =>
      db.selectFrom('observations').select('record_json').where('id', '=', id).executeTakeFirst(),
    );
    if (row === undefined) throw new NotFoundError(`observation ${JSON.stringify(id)} is not stored`);
    return parseStored(ObservationSchema, row.record_json, `observation ${id}`);
  }

  async messagePiecesForObservation(observationId: string): Promise<string[]> {
    await this.getObservation(observationId);
    const rows = await this.#read((db) =>
      db
        .selectFrom('observation_message_pieces')
        .select('piece_id')
        .where('observation_id', '=', observationId)
        .orderBy('position')
        .execute(),
    );
    return rows.map((row) => row.piece_id);
  }

  async getScore(id: string): Promise<Score> {
    const row = await this.#read((db) =>
      db.selectFrom('scores').select('record_json').where('id', '=', id).executeTakeFirst(),
    );
    if (row === undefined) throw new NotFoundError(`score ${JSON.stringify(id)} is not stored`);
    return parseStored(ScoreSchema, row.record_json, `score ${id}`);
  }

  async listScores(filter: ScoreFilter = {}): Promise<Score[]> {
    const rows = await this.#read((db) => {
      let query = db.selectFrom('scores').select('record_json');
      if (filter.status !== undefined) query = query.where('status', '=', filter.status);
      const observationId = filter.observationId;
      if (observationId !== undefined) {
        query = query.where(({ exists, selectFrom }) =>
          exists(
            selectFrom('score_observations')
              .select('score_observations.score_id')
              .whereRef('score_observations.score_id', '=', 'scores.id')
              .where('score_observations.observation_id', '=', observationId),
          ),
        );
      }
      const conversationId = filter.conversationId;
      if (conversationId !== undefined) {
        query = query.where(({ exists, selectFrom }) =>
          exists(
            selectFrom('score_message_pieces')
              .innerJoin('message_pieces', 'message_pieces.id', 'score_message_pieces.piece_id')
              .select('score_message_pieces.score_id')
              .whereRef('score_message_pieces.score_id', '=', 'scores.id')
              .where('message_pieces.conversation_id', '=', conversationId),
          ),
        );
      }
      query = query.orderBy('created_at').orderBy('id');
      if (filter.limit !== undefined) query = query.limit(filter.limit);
      return query.execute();
    });
    return rows.map((row) => parseStored(ScoreSchema, row.record_json, 'score'));
  }

  async observationsForScore(scoreId: string): Promise<Observation[]> {
    await this.getScore(scoreId);
    const rows = await this.#read((db) =>
      db
        .selectFrom('score_observations')
        .innerJoin('observations', 'observations.id', 'score_observations.observation_id')
        .select('observations.record_json')
        .where('score_observations.score_id', '=', scoreId)
        .orderBy('score_observations.position')
        .execute(),
    );
    return rows.map((row) => parseStored(ObservationSchema, row.record_json, 'observation'));
  }

  async createConversation(input: NewConversation = {}): Promise<Conversation> {
    const record = parseRecord(
      ConversationSchema,
      {
        id: input.id ?? randomUUID(),
        createdAt: input.createdAt ?? this.#now(),
        labels: input.labels ?? {},
        metadata: input.metadata ?? {},
      },
      'conversation',
    );
    await this.#write((trx) => storeConversation(trx, record));
    return record;
  }

  async getConversation(id: string): Promise<Conversation> {
    const row = await this.#read((db) =>
      db.selectFrom('conversations').select('record_json').where('id', '=', id).executeTakeFirst(),
    );
    if (row === undefined) throw new NotFoundError(`conversation ${JSON.stringify(id)} is not stored`);
    return parseStored(ConversationSchema, row.record_json, `conversation ${id}`);
  }

  async appendMessage(input: NewMessage): Promise<MessagePiece[]> {
    if (input.texts.length === 0) {
      throw new InvalidRecordError('a message needs at least one piece of text (texts is empty)');
    }
    const createdAt = input.createdAt ?? this.#now();
    return this.#write(async (trx) => {
      let conversation = trx.selectFrom('conversations').select('id').where('id', '=', input.conversationId);
      // Appends to one conversation queue here (SQLite already serializes writers).
      if (this.#backend === 'postgres') conversation = conversation.forUpdate();
      if ((await conversation.executeTakeFirst()) === undefined) {
        throw new NotFoundError(
          `conversation ${JSON.stringify(input.conversationId)} is not stored; create it before adding messages`,
        );
      }
      const last = await trx
        .selectFrom('message_pieces')
        .select(({ fn }) => fn.max('turn').as('turn'))
        .where('conversation_id', '=', input.conversationId)
        .executeTakeFirst();
      const turn = last?.turn === null || last?.turn === undefined ? 0 : Number(last.turn) + 1;
      const pieces = input.texts.map((text, sequence) =>
        parseRecord(
          MessagePieceSchema,
          {
            id: randomUUID(),
            conversationId: input.conversationId,
            turn,
            sequence,
            role: input.role,
            text,
            labels: input.labels ?? {},
            createdAt,
          },
          'message piece',
        ),
      );
      for (const piece of pieces) await storeMessagePiece(trx, piece);
      return pieces;
    });
  }

  async addMessagePiece(piece: MessagePiece): Promise<void> {
    const record = parseRecord(MessagePieceSchema, piece, 'message piece');
    await this.#write((trx) => storeMessagePiece(trx, record));
  }

  async getMessagePiece(id: string): Promise<MessagePiece> {
    const row = await this.#read((db) =>
      db.selectFrom('message_pieces').select('record_json').where('id', '=', id).executeTakeFirst(),
    );
    if (row === undefined) throw new NotFoundError(`message piece ${JSON.stringify(id)} is not stored`);
    return parseStored(MessagePieceSchema, row.record_json, `message piece ${id}`);
  }

  async listMessagePieces(conversationId: string): Promise<MessagePiece[]> {
    await this.getConversation(conversationId);
    const rows = await this.#read((db) =>
      db
        .selectFrom('message_pieces')
        .select('record_json')
        .where('conversation_id', '=', conversationId)
        .orderBy('turn')
        .orderBy('sequence')
        .execute(),
    );
    return rows.map((row) => parseStored(MessagePieceSchema, row.record_json, 'message piece'));
  }

  async saveAttackResult(result: AttackResult): Promise<void> {
    const record = parseRecord(AttackResultSchema, result, 'attack result');
    await this.#write((trx) => storeAttackResult(trx, record));
  }

  async getAttackResult(id: string): Promise<AttackResult> {
    const row = await this.#read((db) =>
      db.selectFrom('attack_results').select('record_json').where('id', '=', id).executeTakeFirst(),
    );
    if (row === undefined) throw new NotFoundError(`attack result ${JSON.stringify(id)} is not stored`);
    return parseStored(AttackResultSchema, row.record_json, `attack result ${id}`);
  }

  async listAttackResults(filter: AttackResultFilter = {}): Promise<AttackResult[]> {
    const rows = await this.#read((db) => {
      let query = db.selectFrom('attack_results').select('record_json');
      if (filter.campaign !== undefined) query = query.where('campaign', '=', filter.campaign);
      if (filter.attack !== undefined) query = query.where('attack', '=', filter.attack);
      if (filter.outcome !== undefined) query = query.where('outcome', '=', filter.outcome);
      return query.orderBy('created_at').orderBy('id').execute();
    });
    return rows.map((row) => parseStored(AttackResultSchema, row.record_json, 'attack result'));
  }

  exportRecords(): AsyncGenerator<ArchiveRecord> {
    this.#assertOpen();
    return exportRecords(this.#db);
  }

  async importRecords(
    records: AsyncIterable<ArchiveRecord> | Iterable<ArchiveRecord>,
  ): Promise<ImportSummary> {
    const summary = emptyImportSummary();
    await this.#write(async (trx) => {
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
          case 'attack_result':
            await storeAttackResult(trx, parseRecord(AttackResultSchema, record.record, 'attack result'));
            break;
        }
        summary[record.recordType]++;
      }
    });
    return summary;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#db.destroy();
  }

  async #read<T>(run: (db: Db) => Promise<T>): Promise<T> {
    this.#assertOpen();
    try {
      return await run(this.#db);
    } catch (error) {
      throw translateSqlError(error);
    }
  }

  async #write<T>(run: (trx: Transaction<Tables>) => Promise<T>): Promise<T> {
    this.#assertOpen();
    try {
      return await this.#db.transaction().execute(run);
    } catch (error) {
      throw translateSqlError(error);
    }
  }

  #assertOpen(): void {
    if (this.#closed) throw new Error('the memory is closed');
  }
}
