import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { ImmutableRecordError, InvalidRecordError, InvalidReferenceError, NotFoundError } from '../errors.js';
import { type AttackResult, AttackResultSchema } from '../models/attack-result.js';
import {
  type Conversation,
  ConversationSchema,
  type MessagePiece,
  MessagePieceSchema,
} from '../models/conversation.js';
import { identifierHash } from '../models/identifier.js';
import { type Observation, ObservationSchema } from '../models/observation.js';
import { canonicalJson, parseRecord } from '../models/record.js';
import { type Score, ScoreSchema } from '../models/score.js';
import type { ResolvedMessage } from '../scorers/scorer.js';
import { type ArchiveRecord, emptyImportSummary, type ImportSummary } from './archive.js';
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
import type { Tables } from './tables.js';

type Db = Kysely<Tables> | Transaction<Tables>;

/** Rows per query while exporting. */
const EXPORT_PAGE_ROWS = 200;

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
      for (const observation of evidence) await this.#storeObservation(trx, observation, linkedPieces);
      await this.#storeScore(trx, record);
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
    await this.#write((trx) => this.#storeConversation(trx, record));
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
      for (const piece of pieces) await this.#storeMessagePiece(trx, piece);
      return pieces;
    });
  }

  async addMessagePiece(piece: MessagePiece): Promise<void> {
    const record = parseRecord(MessagePieceSchema, piece, 'message piece');
    await this.#write((trx) => this.#storeMessagePiece(trx, record));
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
    await this.#write((trx) => this.#storeAttackResult(trx, record));
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

  async *exportRecords(): AsyncGenerator<ArchiveRecord> {
    this.#assertOpen();
    // One snapshot for the whole export, so records written meanwhile never appear half-linked.
    const trx = await this.#db
      .startTransaction()
      .setIsolationLevel('repeatable read')
      .setAccessMode('read only')
      .execute();
    let finished = false;
    try {
      for await (const rows of pages((offset) =>
        trx
          .selectFrom('conversations')
          .select('record_json')
          .orderBy('created_at')
          .orderBy('id')
          .limit(EXPORT_PAGE_ROWS)
          .offset(offset)
          .execute(),
      )) {
        for (const row of rows) {
          yield {
            recordType: 'conversation',
            record: parseStored(ConversationSchema, row.record_json, 'conversation'),
          };
        }
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
        for (const row of rows) {
          yield {
            recordType: 'observation',
            record: parseStored(ObservationSchema, row.record_json, 'observation'),
            messagePieceIds: links.get(row.id) ?? [],
          };
        }
      }
      for await (const rows of pages((offset) =>
        trx
          .selectFrom('scores')
          .select('record_json')
          .orderBy('created_at')
          .orderBy('id')
          .limit(EXPORT_PAGE_ROWS)
          .offset(offset)
          .execute(),
      )) {
        for (const row of rows) {
          yield { recordType: 'score', record: parseStored(ScoreSchema, row.record_json, 'score') };
        }
      }
      for await (const rows of pages((offset) =>
        trx
          .selectFrom('attack_results')
          .select('record_json')
          .orderBy('created_at')
          .orderBy('id')
          .limit(EXPORT_PAGE_ROWS)
          .offset(offset)
          .execute(),
      )) {
        for (const row of rows) {
          yield {
            recordType: 'attack_result',
            record: parseStored(AttackResultSchema, row.record_json, 'attack result'),
          };
        }
      }
      finished = true;
    } finally {
      if (finished) await trx.commit().execute();
      else await trx.rollback().execute();
    }
  }

  async importRecords(
    records: AsyncIterable<ArchiveRecord> | Iterable<ArchiveRecord>,
  ): Promise<ImportSummary> {
    const summary = emptyImportSummary();
    await this.#write(async (trx) => {
      for await (const record of records) {
        switch (record.recordType) {
          case 'conversation':
            await this.#storeConversation(
              trx,
              parseRecord(ConversationSchema, record.record, 'conversation'),
            );
            break;
          case 'message_piece':
            await this.#storeMessagePiece(
              trx,
              parseRecord(MessagePieceSchema, record.record, 'message piece'),
            );
            break;
          case 'observation': {
            const observation = parseRecord(ObservationSchema, record.record, 'observation');
            const inserted = await this.#storeObservation(trx, observation, record.messagePieceIds);
            if (!inserted) await assertSameLinks(trx, observation.id, record.messagePieceIds);
            break;
          }
          case 'score':
            await this.#storeScore(trx, parseRecord(ScoreSchema, record.record, 'score'));
            break;
          case 'attack_result':
            await this.#storeAttackResult(
              trx,
              parseRecord(AttackResultSchema, record.record, 'attack result'),
            );
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

  async #storeConversation(trx: Transaction<Tables>, record: Conversation): Promise<void> {
    const result = await trx
      .insertInto('conversations')
      .values({ id: record.id, created_at: record.createdAt, record_json: JSON.stringify(record) })
      .onConflict((oc) => oc.column('id').doNothing())
      .executeTakeFirst();
    if (result.numInsertedOrUpdatedRows === 0n) {
      await assertSameAsStored(trx, 'conversations', 'conversation', record);
    }
  }

  async #storeMessagePiece(trx: Transaction<Tables>, record: MessagePiece): Promise<void> {
    const conversation = await trx
      .selectFrom('conversations')
      .select('id')
      .where('id', '=', record.conversationId)
      .executeTakeFirst();
    if (conversation === undefined) {
      throw new InvalidReferenceError(
        `message piece ${JSON.stringify(record.id)} belongs to conversation ${JSON.stringify(record.conversationId)}, which is not stored; create the conversation first`,
      );
    }
    const otherRole = await trx
      .selectFrom('message_pieces')
      .select(['id', 'role'])
      .where('conversation_id', '=', record.conversationId)
      .where('turn', '=', record.turn)
      .where('role', '!=', record.role)
      .where('id', '!=', record.id)
      .executeTakeFirst();
    if (otherRole !== undefined) {
      throw new InvalidReferenceError(
        `turn ${record.turn} of conversation ${JSON.stringify(record.conversationId)} is a ${otherRole.role} message; a piece of it cannot have role ${record.role}`,
      );
    }
    const result = await trx
      .insertInto('message_pieces')
      .values({
        id: record.id,
        conversation_id: record.conversationId,
        turn: record.turn,
        sequence: record.sequence,
        role: record.role,
        created_at: record.createdAt,
        record_json: JSON.stringify(record),
      })
      .onConflict((oc) => oc.column('id').doNothing())
      .executeTakeFirst();
    if (result.numInsertedOrUpdatedRows === 0n) {
      await assertSameAsStored(trx, 'message_pieces', 'message piece', record);
    }
  }

  /**
   * Stores an observation (or checks it equals the stored one); links a new one to `pieceIds` in order.
   * Returns whether it was new.
   */
  async #storeObservation(
    trx: Transaction<Tables>,
    record: Observation,
    pieceIds: readonly string[],
  ): Promise<boolean> {
    const result = await trx
      .insertInto('observations')
      .values({
        id: record.id,
        source_hash: identifierHash(record.sourceIdentifier),
        acquisition: record.acquisition,
        uri: record.scorable.uri,
        match: record.scorable.match,
        observed_at: record.observedAt,
        record_json: JSON.stringify(record),
      })
      .onConflict((oc) => oc.column('id').doNothing())
      .executeTakeFirst();
    if (result.numInsertedOrUpdatedRows === 0n) {
      await assertSameAsStored(trx, 'observations', 'observation', record);
      return false;
    }
    await assertPiecesStored(trx, pieceIds, `observation ${JSON.stringify(record.id)}`);
    if (pieceIds.length > 0) {
      await trx
        .insertInto('observation_message_pieces')
        .values(
          pieceIds.map((pieceId, position) => ({ observation_id: record.id, position, piece_id: pieceId })),
        )
        .execute();
    }
    return true;
  }

  async #storeScore(trx: Transaction<Tables>, record: Score): Promise<void> {
    const observationIds = [...new Set(record.observationIds)];
    if (observationIds.length > 0) {
      const stored = await trx
        .selectFrom('observations')
        .select('id')
        .where('id', 'in', observationIds)
        .execute();
      const storedIds = new Set(stored.map((row) => row.id));
      const missing = observationIds.filter((id) => !storedIds.has(id));
      if (missing.length > 0) {
        throw new InvalidReferenceError(
          `score ${JSON.stringify(record.id)} rests on observation ${quoteList(missing)}, which is not stored; pass it to saveScore with the score`,
        );
      }
    }
    const pieceIds = record.scorable.scorableType === 'message' ? record.scorable.pieceIds : [];
    await assertPiecesStored(trx, pieceIds, `score ${JSON.stringify(record.id)}`);
    if (record.messagePieceId !== undefined) {
      await assertPiecesStored(trx, [record.messagePieceId], `score ${JSON.stringify(record.id)}`);
    }
    const result = await trx
      .insertInto('scores')
      .values({
        id: record.id,
        status: record.status,
        value: record.value === null ? null : record.value ? 1 : 0,
        scorable_type: record.scorable.scorableType,
        scorer_hash: identifierHash(record.scorer),
        message_piece_id: record.messagePieceId ?? null,
        created_at: record.createdAt,
        record_json: JSON.stringify(record),
      })
      .onConflict((oc) => oc.column('id').doNothing())
      .executeTakeFirst();
    if (result.numInsertedOrUpdatedRows === 0n) {
      await assertSameAsStored(trx, 'scores', 'score', record);
      return;
    }
    if (record.observationIds.length > 0) {
      await trx
        .insertInto('score_observations')
        .values(
          record.observationIds.map((observationId, position) => ({
            score_id: record.id,
            position,
            observation_id: observationId,
          })),
        )
        .execute();
    }
    if (pieceIds.length > 0) {
      await trx
        .insertInto('score_message_pieces')
        .values(pieceIds.map((pieceId, position) => ({ score_id: record.id, position, piece_id: pieceId })))
        .execute();
    }
  }

  async #storeAttackResult(trx: Transaction<Tables>, record: AttackResult): Promise<void> {
    const conversation = await trx
      .selectFrom('conversations')
      .select('id')
      .where('id', '=', record.conversationId)
      .executeTakeFirst();
    if (conversation === undefined) {
      throw new InvalidReferenceError(
        `attack result ${JSON.stringify(record.id)} names conversation ${JSON.stringify(record.conversationId)}, which is not stored`,
      );
    }
    if (record.scoreId !== null) {
      const row = await trx
        .selectFrom('scores')
        .select('record_json')
        .where('id', '=', record.scoreId)
        .executeTakeFirst();
      if (row === undefined) {
        throw new InvalidReferenceError(
          `attack result ${JSON.stringify(record.id)} names score ${JSON.stringify(record.scoreId)}, which is not stored; save the score first`,
        );
      }
      const score = parseStored(ScoreSchema, row.record_json, `score ${record.scoreId}`);
      const expected = outcomeOf(score);
      if (record.outcome !== 'error' && record.outcome !== expected) {
        throw new InvalidReferenceError(
          `attack result ${JSON.stringify(record.id)} has outcome "${record.outcome}" but its score ${JSON.stringify(score.id)} says "${expected}"`,
        );
      }
    }
    const result = await trx
      .insertInto('attack_results')
      .values({
        id: record.id,
        campaign: record.campaign,
        attack: record.attack,
        attempt: record.attempt,
        conversation_id: record.conversationId,
        outcome: record.outcome,
        score_id: record.scoreId,
        created_at: record.createdAt,
        record_json: JSON.stringify(record),
      })
      .onConflict((oc) => oc.column('id').doNothing())
      .executeTakeFirst();
    if (result.numInsertedOrUpdatedRows === 0n) {
      await assertSameAsStored(trx, 'attack_results', 'attack result', record);
    }
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

/** The attack outcome a score stands for: true is a success, false a failure, no value is undetermined. */
export function outcomeOf(score: Pick<Score, 'status' | 'value'>): 'success' | 'failure' | 'undetermined' {
  if (score.status === 'undetermined' || score.value === null) return 'undetermined';
  return score.value ? 'success' : 'failure';
}

type RecordTable = 'conversations' | 'message_pieces' | 'observations' | 'scores' | 'attack_results';

/** Storing an identical record again is a no-op; a different one under the same id is refused. */
async function assertSameAsStored(
  trx: Transaction<Tables>,
  table: RecordTable,
  what: string,
  record: { id: string },
): Promise<void> {
  const row = await trx
    .selectFrom(table)
    .select('record_json')
    .where('id', '=', record.id)
    .executeTakeFirstOrThrow();
  if (canonicalJson(JSON.parse(row.record_json)) !== canonicalJson(record)) {
    throw new ImmutableRecordError(
      `a different ${what} is already stored under id ${JSON.stringify(record.id)}; stored records never change, so give the new one its own id`,
    );
  }
}

/** An imported observation that is already stored must have been taken after the same message. */
async function assertSameLinks(
  trx: Transaction<Tables>,
  observationId: string,
  pieceIds: readonly string[],
): Promise<void> {
  const stored = (await linksByObservation(trx, [observationId])).get(observationId) ?? [];
  if (stored.length !== pieceIds.length || stored.some((id, i) => id !== pieceIds[i])) {
    throw new ImmutableRecordError(
      `observation ${JSON.stringify(observationId)} is already stored, linked to message pieces ${quoteList(stored)} rather than ${quoteList(pieceIds)}; stored links never change`,
    );
  }
}

async function assertPiecesStored(
  trx: Transaction<Tables>,
  pieceIds: readonly string[],
  referrer: string,
): Promise<void> {
  const wanted = [...new Set(pieceIds)];
  if (wanted.length === 0) return;
  const rows = await trx.selectFrom('message_pieces').select('id').where('id', 'in', wanted).execute();
  const found = new Set(rows.map((row) => row.id));
  const missing = wanted.filter((id) => !found.has(id));
  if (missing.length > 0) {
    throw new InvalidReferenceError(
      `${referrer} refers to message piece ${quoteList(missing)}, which is not stored`,
    );
  }
}

async function linksByObservation(
  trx: Transaction<Tables>,
  observationIds: readonly string[],
): Promise<Map<string, string[]>> {
  const links = new Map<string, string[]>();
  if (observationIds.length === 0) return links;
  const rows = await trx
    .selectFrom('observation_message_pieces')
    .select(['observation_id', 'piece_id'])
    .where('observation_id', 'in', [...observationIds])
    .orderBy('observation_id')
    .orderBy('position')
    .execute();
  for (const row of rows) {
    const list = links.get(row.observation_id) ?? [];
    list.push(row.piece_id);
    links.set(row.observation_id, list);
  }
  return links;
}

async function* pages<T>(fetch: (offset: number) => Promise<T[]>): AsyncGenerator<T[]> {
  for (let offset = 0; ; offset += EXPORT_PAGE_ROWS) {
    const rows = await fetch(offset);
    if (rows.length > 0) yield rows;
    if (rows.length < EXPORT_PAGE_ROWS) return;
  }
}

/** Parses a stored record again with its schema: a row that no longer validates is never returned. */
function parseStored<S extends Parameters<typeof parseRecord>[0]>(
  schema: S,
  json: string,
  what: string,
): ReturnType<typeof parseRecord<S>> {
  return parseRecord(schema, JSON.parse(json), `stored ${what}`);
}

function quoteList(values: readonly (string | number)[]): string {
  return values.map((value) => JSON.stringify(value)).join(', ');
}
