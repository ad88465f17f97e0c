import type { Kysely } from 'kysely';
import type { AttackResult } from '../models/attack-result.js';
import type { AttemptRecord } from '../models/attempt-record.js';
import type { CampaignRun } from '../models/campaign-run.js';
import type { Conversation, MessagePiece } from '../models/conversation.js';
import type { Observation } from '../models/observation.js';
import type { Score } from '../models/score.js';
import type { ResolvedMessage } from '../scorers/scorer.js';
import type { ArchiveRecord, ImportSummary } from './archive.js';
import type {
  AttackResultFilter,
  Memory,
  MemoryLocation,
  NewConversation,
  NewMessage,
  RunFilter,
  ScoreFilter,
} from './memory.js';
import type { Backend } from './migrations.js';
import { SqlArchive } from './sql-archive.js';
import { SqlContext } from './sql-context.js';
import { SqlConversations } from './sql-conversations.js';
import { SqlEvidence } from './sql-evidence.js';
import { SqlRunQueries } from './sql-run-queries.js';
import { SqlRuns } from './sql-runs.js';
import type { Tables } from './tables.js';

/**
 * The {@link Memory} over one query layer (Kysely) for both backends (internal; open it with
 * `openMemory`): one object per aggregate — conversations, evidence, runs, archive — sharing one
 * {@link SqlContext}; this class only routes the interface's methods to them.
 */
export class SqlMemory implements Memory {
  readonly location: MemoryLocation;
  readonly runQueries: SqlRunQueries;
  readonly #sql: SqlContext;
  readonly #conversations: SqlConversations;
  readonly #evidence: SqlEvidence;
  readonly #runs: SqlRuns;
  readonly #archive: SqlArchive;

  constructor(db: Kysely<Tables>, backend: Backend, location: MemoryLocation, now: () => string) {
    this.location = location;
    this.#sql = new SqlContext(db, backend, now);
    this.#conversations = new SqlConversations(this.#sql);
    this.#evidence = new SqlEvidence(this.#sql);
    this.#runs = new SqlRuns(this.#sql, this.#evidence);
    this.#archive = new SqlArchive(this.#sql);
    this.runQueries = new SqlRunQueries(this.#sql, this.#runs);
  }

  resolveMessage(pieceIds: readonly string[]): Promise<ResolvedMessage> {
    return this.#conversations.resolveMessage(pieceIds);
  }
  createConversation(input?: NewConversation): Promise<Conversation> {
    return this.#conversations.createConversation(input);
  }
  getConversation(id: string): Promise<Conversation> {
    return this.#conversations.getConversation(id);
  }
  appendMessage(input: NewMessage): Promise<MessagePiece[]> {
    return this.#conversations.appendMessage(input);
  }
  addMessagePiece(piece: MessagePiece): Promise<void> {
    return this.#conversations.addMessagePiece(piece);
  }
  getMessagePiece(id: string): Promise<MessagePiece> {
    return this.#conversations.getMessagePiece(id);
  }
  listMessagePieces(conversationId: string): Promise<MessagePiece[]> {
    return this.#conversations.listMessagePieces(conversationId);
  }

  saveScore(score: Score, observations: readonly Observation[]): Promise<void> {
    return this.#evidence.saveScore(score, observations);
  }
  getObservation(id: string): Promise<Observation> {
    return this.#evidence.getObservation(id);
  }
  messagePiecesForObservation(observationId: string): Promise<string[]> {
    return this.#evidence.messagePiecesForObservation(observationId);
  }
  getScore(id: string): Promise<Score> {
    return this.#evidence.getScore(id);
  }
  listScores(filter?: ScoreFilter): Promise<Score[]> {
    return this.#evidence.listScores(filter);
  }
  observationsForScore(scoreId: string): Promise<Observation[]> {
    return this.#evidence.observationsForScore(scoreId);
  }

  saveRun(run: CampaignRun): Promise<void> {
    return this.#runs.saveRun(run);
  }
  getRun(runId: string): Promise<CampaignRun> {
    return this.#runs.getRun(runId);
  }
  listRuns(filter?: RunFilter): Promise<CampaignRun[]> {
    return this.#runs.listRuns(filter);
  }
  listAttempts(runId: string): Promise<AttemptRecord[]> {
    return this.#runs.listAttempts(runId);
  }
  saveAttackResult(result: AttackResult): Promise<void> {
    return this.#runs.saveAttackResult(result);
  }
  getAttackResult(id: string): Promise<AttackResult> {
    return this.#runs.getAttackResult(id);
  }
  listAttackResults(filter?: AttackResultFilter): Promise<AttackResult[]> {
    return this.#runs.listAttackResults(filter);
  }

  exportRecords(): AsyncGenerator<ArchiveRecord> {
    return this.#archive.exportRecords();
  }
  importRecords(records: AsyncIterable<ArchiveRecord> | Iterable<ArchiveRecord>): Promise<ImportSummary> {
    return this.#archive.importRecords(records);
  }

  close(): Promise<void> {
    return this.#sql.close();
  }
}
