import type { Transaction } from 'kysely';
import { ImmutableRecordError, InvalidRecordError, InvalidReferenceError } from '../errors.js';
import { type AttackResult, outcomeOf } from '../models/attack-result.js';
import { taskOutcomeOf } from '../models/attempt-task.js';
import type { CampaignRun } from '../models/campaign-run.js';
import type { Conversation, MessagePiece } from '../models/conversation.js';
import { identifierHash } from '../models/identifier.js';
import type { Observation } from '../models/observation.js';
import { canonicalJson, parseRecord } from '../models/record.js';
import { type Score, ScoreSchema } from '../models/score.js';
import type { TaskOutcome } from '../models/vocabulary.js';
import { storeAttemptFacts, storeRunAttacks } from './attempt-facts.js';
import { loadObservations, splitContents, storeContents } from './evidence-contents.js';
import {
  ATTACK_RESULT_PARTS,
  joinParts,
  OBSERVATION_PARTS,
  type RowWithParts,
  SCORE_PARTS,
  splitParts,
  storeParts,
} from './record-parts.js';
import type { Db } from './sql-context.js';
import type { Tables } from './tables.js';

/**
 * Writing records inside a transaction (internal). Each `store…` function validates references first, so
 * a mistake is a typed error naming the record, not a driver error; inserts use ON CONFLICT DO NOTHING, so
 * storing an identical record again is a no-op and a different one under the same id is an
 * {@link ImmutableRecordError}.
 */

export async function storeConversation(trx: Transaction<Tables>, record: Conversation): Promise<void> {
  const result = await trx
    .insertInto('conversations')
    .values({ id: record.id, created_at: record.createdAt, record_json: JSON.stringify(record) })
    .onConflict((oc) => oc.column('id').doNothing())
    .executeTakeFirst();
  if (result.numInsertedOrUpdatedRows === 0n) {
    await assertSameAsStored(trx, 'conversations', 'conversation', record);
  }
}

/** Refuses a record that names a conversation the memory does not hold. */
async function requireConversation(
  trx: Transaction<Tables>,
  conversationId: string,
  message: string,
): Promise<void> {
  const conversation = await trx
    .selectFrom('conversations')
    .select('id')
    .where('id', '=', conversationId)
    .executeTakeFirst();
  if (conversation === undefined) throw new InvalidReferenceError(message);
}

export async function storeMessagePiece(trx: Transaction<Tables>, record: MessagePiece): Promise<void> {
  await requireConversation(
    trx,
    record.conversationId,
    `message piece ${JSON.stringify(record.id)} belongs to conversation ${JSON.stringify(record.conversationId)}, which is not stored; create the conversation first`,
  );
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
export async function storeObservation(
  trx: Transaction<Tables>,
  record: Observation,
  pieceIds: readonly string[],
): Promise<boolean> {
  const split = splitContents(record);
  const parted = splitParts(JSON.parse(split.json) as object, OBSERVATION_PARTS);
  const parts = await storeParts(trx, parted);
  const result = await trx
    .insertInto('observations')
    .values({
      id: record.id,
      source_hash: identifierHash(record.sourceIdentifier),
      acquisition: record.acquisition,
      uri: record.scorable.uri,
      match: record.scorable.match,
      observed_at: record.observedAt,
      record_json: parted.json,
      parts,
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .executeTakeFirst();
  if (result.numInsertedOrUpdatedRows === 0n) {
    const row = await trx
      .selectFrom('observations')
      .select(['id', 'record_json', 'parts'])
      .where('id', '=', record.id)
      .executeTakeFirstOrThrow();
    const [stored] = await loadObservations(trx, [row]);
    assertSameRecord(stored, record, 'observation', record.id);
    return false;
  }
  await storeContents(trx, record.id, split.contents);
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

export async function storeScore(trx: Transaction<Tables>, record: Score): Promise<void> {
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
  const split = splitParts(record, SCORE_PARTS);
  const parts = await storeParts(trx, split);
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
      record_json: split.json,
      parts,
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

export async function storeAttackResult(trx: Transaction<Tables>, record: AttackResult): Promise<void> {
  await requireConversation(
    trx,
    record.conversationId,
    `attack result ${JSON.stringify(record.id)} names conversation ${JSON.stringify(record.conversationId)}, which is not stored`,
  );
  if (record.scoreId !== null) {
    const row = await trx
      .selectFrom('scores')
      .select(['record_json', 'parts'])
      .where('id', '=', record.scoreId)
      .executeTakeFirst();
    if (row === undefined) {
      throw new InvalidReferenceError(
        `attack result ${JSON.stringify(record.id)} names score ${JSON.stringify(record.scoreId)}, which is not stored; save the score first`,
      );
    }
    const [score] = await parseStoredRows(trx, ScoreSchema, [row], `score ${record.scoreId}`);
    const expected = outcomeOf(score as Score);
    if (record.outcome !== 'error' && record.outcome !== expected) {
      throw new InvalidReferenceError(
        `attack result ${JSON.stringify(record.id)} has outcome "${record.outcome}" but its score ${JSON.stringify(record.scoreId)} says "${expected}"`,
      );
    }
  }
  if (record.task?.scoreId != null) {
    await requireScoreOutcome(
      trx,
      record.task.scoreId,
      record.task.outcome,
      `attack result ${JSON.stringify(record.id)}'s task`,
    );
  }
  if (record.runId !== undefined) {
    const run = await trx.selectFrom('runs').select('id').where('id', '=', record.runId).executeTakeFirst();
    if (run === undefined) {
      throw new InvalidReferenceError(
        `attack result ${JSON.stringify(record.id)} names run ${JSON.stringify(record.runId)}, which is not stored; save the run first`,
      );
    }
  }
  const split = splitParts(record, ATTACK_RESULT_PARTS);
  const parts = await storeParts(trx, split);
  const result = await trx
    .insertInto('attack_results')
    .values({
      id: record.id,
      run_id: record.runId ?? null,
      campaign: record.campaign,
      attack: record.attack,
      attempt: record.attempt,
      conversation_id: record.conversationId,
      outcome: record.outcome,
      task_outcome: record.task?.outcome ?? null,
      score_id: record.scoreId,
      created_at: record.createdAt,
      record_json: split.json,
      parts,
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .executeTakeFirst();
  if (result.numInsertedOrUpdatedRows === 0n) {
    await assertSameAsStored(trx, 'attack_results', 'attack result', record);
  } else {
    await storeAttemptFacts(trx, record);
  }
}

/** The task's score is stored and says the outcome the result claims for it. */
async function requireScoreOutcome(
  trx: Transaction<Tables>,
  scoreId: string,
  outcome: TaskOutcome,
  what: string,
): Promise<void> {
  const row = await trx
    .selectFrom('scores')
    .select(['record_json', 'parts'])
    .where('id', '=', scoreId)
    .executeTakeFirst();
  if (row === undefined) {
    throw new InvalidReferenceError(
      `${what} names score ${JSON.stringify(scoreId)}, which is not stored; save the score first`,
    );
  }
  const [score] = await parseStoredRows(trx, ScoreSchema, [row], `score ${scoreId}`);
  const expected = taskOutcomeOf(score as Score);
  if (outcome !== expected) {
    throw new InvalidReferenceError(
      `${what} has outcome "${outcome}" but its score ${JSON.stringify(scoreId)} says "${expected}"`,
    );
  }
}

export async function storeRun(trx: Transaction<Tables>, record: CampaignRun): Promise<void> {
  const result = await trx
    .insertInto('runs')
    .values({
      id: record.runId,
      campaign: record.campaign,
      started_at: record.startedAt,
      record_json: JSON.stringify(record),
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .executeTakeFirst();
  if (result.numInsertedOrUpdatedRows === 0n) {
    await assertSameAsStored(trx, 'runs', 'campaign run', record, record.runId);
  } else {
    await storeRunAttacks(trx, record);
  }
}

type RecordTable = 'conversations' | 'message_pieces' | 'scores' | 'runs' | 'attack_results';

/** Storing an identical record again is a no-op; a different one under the same id is refused. */
export async function assertSameAsStored(
  trx: Transaction<Tables>,
  table: RecordTable,
  what: string,
  record: object,
  id: string = (record as { id: string }).id,
): Promise<void> {
  const row =
    table === 'scores' || table === 'attack_results'
      ? await trx
          .selectFrom(table)
          .select(['record_json', 'parts'])
          .where('id', '=', id)
          .executeTakeFirstOrThrow()
      : {
          ...(await trx
            .selectFrom(table)
            .select('record_json')
            .where('id', '=', id)
            .executeTakeFirstOrThrow()),
          parts: null,
        };
  const [stored] = await joinParts(trx, [row], () => `${what} ${id}`);
  assertSameRecord(stored, record, what, id);
}

function assertSameRecord(stored: unknown, record: object, what: string, id: string): void {
  if (canonicalJson(stored) !== canonicalJson(record)) {
    throw new ImmutableRecordError(
      `a different ${what} is already stored under id ${JSON.stringify(id)}; stored records never change, so give the new one its own id`,
    );
  }
}

/** An imported observation that is already stored must have been taken after the same message. */
export async function assertSameLinks(
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

export async function linksByObservation(
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

/** Parses a stored record again with its schema: a row that no longer validates is never returned. */
export function parseStored<S extends Parameters<typeof parseRecord>[0]>(
  schema: S,
  json: string,
  what: string,
): ReturnType<typeof parseRecord<S>> {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    // A row edited outside Witness: the documented error, never a bare SyntaxError.
    throw new InvalidRecordError(
      `stored ${what} is not JSON (${(error as Error).message}); the database was changed outside Witness`,
    );
  }
  return parseRecord(schema, value, `stored ${what}`);
}

/**
 * Parses stored rows again with their schema, each with its parts put back (record-parts.ts); `what` names
 * the kind of record in errors.
 */
export async function parseStoredRows<S extends Parameters<typeof parseRecord>[0]>(
  db: Db,
  schema: S,
  rows: readonly RowWithParts[],
  what: string,
): Promise<ReturnType<typeof parseRecord<S>>[]> {
  const values = await joinParts(db, rows, () => what);
  return values.map((value) => parseRecord(schema, value, `stored ${what}`));
}

export function quoteList(values: readonly (string | number)[]): string {
  return values.map((value) => JSON.stringify(value)).join(', ');
}
