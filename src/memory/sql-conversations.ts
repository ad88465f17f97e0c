import { randomUUID } from 'node:crypto';
import { InvalidRecordError, InvalidReferenceError, NotFoundError } from '../errors.js';
import {
  type Conversation,
  ConversationSchema,
  type MessagePiece,
  MessagePieceSchema,
} from '../models/conversation.js';
import { parseRecord } from '../models/record.js';
import type { ResolvedMessage } from '../scorers/scorer.js';
import type { NewConversation, NewMessage } from './memory.js';
import type { SqlContext } from './sql-context.js';
import { parseStored, quoteList, storeConversation, storeMessagePiece } from './store-records.js';

/** The conversations aggregate (internal): conversations, their message pieces, and resolving a message. */
export class SqlConversations {
  readonly #sql: SqlContext;

  constructor(sql: SqlContext) {
    this.#sql = sql;
  }

  async resolveMessage(pieceIds: readonly string[]): Promise<ResolvedMessage> {
    if (pieceIds.length === 0) {
      throw new InvalidReferenceError('a message scorable must name at least one message piece');
    }
    const wanted = [...new Set(pieceIds)];
    const rows = await this.#sql.read((db) =>
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
    const message = await this.#sql.read((db) =>
      db
        .selectFrom('message_pieces')
        .select('id')
        .where('conversation_id', '=', conversationId)
        .where('turn', '=', turn)
        .orderBy('sequence')
        .execute(),
    );
    const later = await this.#sql.read((db) =>
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

  async createConversation(input: NewConversation = {}): Promise<Conversation> {
    const record = parseRecord(
      ConversationSchema,
      {
        id: input.id ?? randomUUID(),
        createdAt: input.createdAt ?? this.#sql.now(),
        labels: input.labels ?? {},
        metadata: input.metadata ?? {},
      },
      'conversation',
    );
    await this.#sql.write((trx) => storeConversation(trx, record));
    return record;
  }

  async getConversation(id: string): Promise<Conversation> {
    const row = await this.#sql.read((db) =>
      db.selectFrom('conversations').select('record_json').where('id', '=', id).executeTakeFirst(),
    );
    if (row === undefined) throw new NotFoundError(`conversation ${JSON.stringify(id)} is not stored`);
    return parseStored(ConversationSchema, row.record_json, `conversation ${id}`);
  }

  async appendMessage(input: NewMessage): Promise<MessagePiece[]> {
    if (input.texts.length === 0) {
      throw new InvalidRecordError('a message needs at least one piece of text (texts is empty)');
    }
    const createdAt = input.createdAt ?? this.#sql.now();
    return this.#sql.write(async (trx) => {
      let conversation = trx.selectFrom('conversations').select('id').where('id', '=', input.conversationId);
      // Appends to one conversation queue here (SQLite already serializes writers).
      if (this.#sql.backend === 'postgres') conversation = conversation.forUpdate();
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
    await this.#sql.write((trx) => storeMessagePiece(trx, record));
  }

  async getMessagePiece(id: string): Promise<MessagePiece> {
    const row = await this.#sql.read((db) =>
      db.selectFrom('message_pieces').select('record_json').where('id', '=', id).executeTakeFirst(),
    );
    if (row === undefined) throw new NotFoundError(`message piece ${JSON.stringify(id)} is not stored`);
    return parseStored(MessagePieceSchema, row.record_json, `message piece ${id}`);
  }

  async listMessagePieces(conversationId: string): Promise<MessagePiece[]> {
    await this.getConversation(conversationId);
    const rows = await this.#sql.read((db) =>
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
}
