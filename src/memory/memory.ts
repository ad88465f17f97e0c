import type { AttackResult } from '../models/attack-result.js';
import type { AttemptRecord } from '../models/attempt-record.js';
import type { CampaignRun } from '../models/campaign-run.js';
import type { Conversation, Labels, MessagePiece } from '../models/conversation.js';
import type { Observation } from '../models/observation.js';
import type { JsonObject } from '../models/record.js';
import type { Score } from '../models/score.js';
import type { AttackOutcome, MessageRole, ScoreStatus } from '../models/vocabulary.js';
import type { ScorerMemory } from '../scorers/scorer.js';
import type { ArchiveRecord, ImportSummary } from './archive.js';
import type { RunQueries } from './run-queries.js';

/**
 * The memory (SPEC §7): conversations, message pieces, observations, scores, campaign runs and attack
 * results, and the links between them. Every record is validated against its zod schema on write and on read.
 *
 * Guarantees every backend gives:
 * - Observations, scores, their links, runs and attack results are append-only, and so is a message piece once an observation or
 *   a score refers to it. The database itself refuses updates and deletes (triggers), so no other client
 *   can rewrite evidence either. Storing an identical record twice is a no-op; a different record under an
 *   existing id is an {@link ImmutableRecordError}.
 * - A score and the observations it rests on are written in one transaction: after a crash either all of
 *   them are stored or none is. A write is durable once its promise resolves.
 */

/**
 * The whole memory. It is also the {@link ScorerMemory} a FileWriteScorer takes:
 * - `resolveMessage` throws {@link NotFoundError} for a piece id that is not stored and
 *   {@link InvalidReferenceError} for pieces of different conversations or different turns; its `pieceIds`
 *   is the whole message in sequence order, and `hasLaterTurn` is true when the conversation holds a piece
 *   at any later turn.
 * - `saveScore` stores a score and the observations it rests on in one transaction. Every observation given
 *   must be named in `score.observationIds`; ids there that are not given must already be stored. When the
 *   score is about a message, new observations are linked to its pieces (the evidence was taken after it).
 */
export interface Memory extends ScorerMemory {
  /** Which backend this is, and where (a PostgreSQL URL is shown without its password). */
  readonly location: MemoryLocation;

  getObservation(id: string): Promise<Observation>;
  /** The message pieces an observation was linked to (the message it was taken after), in order. */
  messagePiecesForObservation(observationId: string): Promise<string[]>;
  getScore(id: string): Promise<Score>;
  /** Scores oldest first (by `createdAt`, then id). */
  listScores(filter?: ScoreFilter): Promise<Score[]>;
  /** The observations a score rests on, in the order of its `observationIds`. */
  observationsForScore(scoreId: string): Promise<Observation[]>;

  createConversation(input?: NewConversation): Promise<Conversation>;
  getConversation(id: string): Promise<Conversation>;
  /** Appends one message at the conversation's next turn, one piece per text, atomically. */
  appendMessage(input: NewMessage): Promise<MessagePiece[]>;
  /** Stores one piece at an explicit turn and sequence (for imports and callers that number turns). */
  addMessagePiece(piece: MessagePiece): Promise<void>;
  getMessagePiece(id: string): Promise<MessagePiece>;
  /** A conversation's pieces by turn, then sequence. */
  listMessagePieces(conversationId: string): Promise<MessagePiece[]>;

  /** Stores a campaign run (before the results of its attempts). Storing an identical run again is a no-op. */
  saveRun(run: CampaignRun): Promise<void>;
  /** Throws {@link NotFoundError} for a run that is not stored. */
  getRun(runId: string): Promise<CampaignRun>;
  /** Runs oldest first (by `startedAt`, then `runId`). */
  listRuns(filter?: RunFilter): Promise<CampaignRun[]>;
  /**
   * A run's attempts, in the run's attack order and then by attempt number: each attack result of the run
   * joined with the run (prompt, expectation), its score and the observations that score rests on.
   */
  listAttempts(runId: string): Promise<AttemptRecord[]>;

  /**
   * Stores the result of an attack attempt. Its conversation, score and run (`runId`) must be stored, and a `success`,
   * `failure` or `undetermined` outcome must agree with its score.
   */
  saveAttackResult(result: AttackResult): Promise<void>;
  getAttackResult(id: string): Promise<AttackResult>;
  /** Attack results oldest first (by `createdAt`, then id). */
  listAttackResults(filter?: AttackResultFilter): Promise<AttackResult[]>;

  /**
   * Every record, in an order that can be imported (conversations, pieces, observations, scores, results),
   * from one read snapshot. Finish (or break out of) the iteration before using this memory for anything
   * else: on SQLite the snapshot holds the memory's only connection.
   */
  exportRecords(): AsyncIterable<ArchiveRecord>;

  /**
   * Counts, pages and single attempts of stored runs, computed by the database from indexed columns (for
   * the viewer and the report: their cost grows with what they show, not with the run).
   */
  readonly runQueries: RunQueries;
  /** Stores exported records in one transaction: all of them or, on any error, none. */
  importRecords(records: AsyncIterable<ArchiveRecord> | Iterable<ArchiveRecord>): Promise<ImportSummary>;

  close(): Promise<void>;
}

export interface MemoryLocation {
  backend: 'sqlite' | 'postgres';
  /** The file path, `:memory:`, or the URL with any password replaced by `***`. */
  target: string;
}

export interface ScoreFilter {
  status?: ScoreStatus | undefined;
  /** Only scores resting on this observation. */
  observationId?: string | undefined;
  /** Only scores about a message of this conversation. */
  conversationId?: string | undefined;
  /** At most this many scores (the oldest first). */
  limit?: number | undefined;
}

export interface RunFilter {
  campaign?: string | undefined;
}

export interface AttackResultFilter {
  campaign?: string | undefined;
  attack?: string | undefined;
  outcome?: AttackOutcome | undefined;
}

export interface NewConversation {
  id?: string | undefined;
  labels?: Labels | undefined;
  metadata?: JsonObject | undefined;
  createdAt?: string | undefined;
}

export interface NewMessage {
  conversationId: string;
  role: MessageRole;
  /** One text per piece (a message of one piece is the common case). */
  texts: readonly string[];
  labels?: Labels | undefined;
  createdAt?: string | undefined;
}
