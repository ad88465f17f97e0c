import type { ScoringExpectation } from '../models/expectation.js';
import type { ComponentIdentifier } from '../models/identifier.js';
import type { Observation } from '../models/observation.js';
import type { Scorable } from '../models/scorable.js';
import type { Score } from '../models/score.js';

/** The scorer seam: decide an expectation about a scorable, or re-judge stored evidence (replay). */
export interface Scorer {
  score(request: ScoreRequest): Promise<ScoringResult>;
  scoreObservation(request: ReplayRequest): Promise<ScoringResult>;
  identifier(): ComponentIdentifier;
}

/**
 * What a scorer decided and the evidence it rests on: every observation a score names in `observationIds`
 * is here (empty when the scorer decided without reading, e.g. the later-turn guard), so callers show or
 * store the evidence without wrapping the source.
 */
export interface ScoringResult {
  scores: Score[];
  observations: Observation[];
}

export interface ScoreRequest {
  scorable: Scorable;
  expectation: ScoringExpectation;
  signal?: AbortSignal | undefined;
}

export interface ReplayRequest {
  observation: Observation;
  expectation: ScoringExpectation;
  /** What the replayed score is about; defaults to the observation's own surface scorable. */
  scorable?: Scorable | undefined;
}

/** A stored message, resolved from the ids of its pieces. */
export interface ResolvedMessage {
  conversationId: string;
  /** The message's turn (sequence) in its conversation. */
  turn: number;
  pieceIds: string[];
  /** True when the conversation holds any turn after this message. */
  hasLaterTurn: boolean;
}

/**
 * What a scorer needs from a memory: resolving message scorables and persisting a score together with the
 * observations it rests on (one transaction). The memory layer implements it.
 */
export interface ScorerMemory {
  /** Throws a typed error for a missing piece id or pieces that are not one message of one conversation. */
  resolveMessage(pieceIds: readonly string[]): Promise<ResolvedMessage>;
  saveScore(score: Score, observations: readonly Observation[]): Promise<void>;
}
