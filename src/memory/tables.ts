import type { Generated } from 'kysely';

/**
 * Row types of the memory's tables (internal). Every table keeps the full record as JSON text
 * (`record_json`, exactly as validated) next to the columns it is queried by; reads parse the JSON again
 * with the record's schema, so the indexed columns are never the source of truth.
 */

export interface SchemaTable {
  id: number;
  version: number;
  migrated_at: string;
}

export interface ConversationTable {
  id: string;
  created_at: string;
  record_json: string;
}

export interface MessagePieceTable {
  id: string;
  conversation_id: string;
  turn: number;
  sequence: number;
  role: string;
  created_at: string;
  record_json: string;
}

export interface ObservationTable {
  id: string;
  source_hash: string;
  acquisition: string;
  uri: string;
  match: string;
  observed_at: string;
  record_json: string;
  /** Where the record's parts kept apart go back (record-parts.ts); null when it has none. */
  parts: string | null;
}

/** A subtree of records stored once per distinct JSON text (record-parts.ts). */
export interface RecordPartTable {
  id: Generated<number>;
  /** sha256 of `json` (its UTF-8 bytes), lowercase hex. */
  sha256: string;
  json: string;
}

/** A retained text kept apart from its observations, once per distinct content (evidence-contents.ts). */
export interface EvidenceContentTable {
  /** sha256 of `bytes`, lowercase hex. */
  sha256: string;
  /** The text's UTF-8 bytes (a BLOB on SQLite, bytea on PostgreSQL). */
  bytes: Uint8Array;
}

/** Which entry of an observation holds which content. */
export interface ObservationContentTable {
  observation_id: string;
  /** Index in the observation's `payload.entries`. */
  entry_index: number;
  content_sha256: string;
}

export interface ObservationMessagePieceTable {
  observation_id: string;
  position: number;
  piece_id: string;
}

export interface ScoreTable {
  id: string;
  status: string;
  /** 1 true, 0 false, null undetermined (an integer on both backends). */
  value: number | null;
  scorable_type: string;
  scorer_hash: string;
  message_piece_id: string | null;
  created_at: string;
  record_json: string;
  parts: string | null;
}

export interface ScoreObservationTable {
  score_id: string;
  position: number;
  observation_id: string;
}

export interface ScoreMessagePieceTable {
  score_id: string;
  position: number;
  piece_id: string;
}

export interface RunTable {
  /** The run's `runId`. */
  id: string;
  campaign: string;
  started_at: string;
  record_json: string;
}

export interface AttackResultTable {
  id: string;
  /** The campaign run of the attempt (null for a result stored without one). */
  run_id: string | null;
  campaign: string;
  attack: string;
  attempt: number;
  conversation_id: string;
  outcome: string;
  /** The user's task outcome (SPEC §16); null when the attack named no task. */
  task_outcome: string | null;
  score_id: string | null;
  created_at: string;
  record_json: string;
  parts: string | null;
}

/** A run's attacks in order (see attempt-facts.ts). */
export interface RunAttackTable {
  run_id: string;
  position: number;
  attack: string;
  /** 1 for a control attack, else 0. */
  control: number;
  /** `workspace`, `home` or `network`: where the attack's condition is judged. */
  surface: string;
}

/** What the viewer and the report count and page by, one row per attempt of a run (see attempt-facts.ts). */
export interface AttemptFactTable {
  result_id: string;
  run_id: string;
  /** The attack's place in its run's list (after every listed one when the run does not list it). */
  position: number;
  attack: string;
  attempt: number;
  /** The adaptive attack's chain (SPEC §15); null for an attempt that is no round of one. */
  chain: string | null;
  /** The round in its chain; 0 for an attempt that is no round. */
  round: number;
  outcome: string;
  outcome_rank: number;
  control: number;
  surface: string;
  task_outcome: string | null;
  finished_at: string;
  containment: string | null;
  /** How many distinct gap codes the evidence has (the codes are rows of `attempt_gaps`). */
  gap_count: number;
}

/** One gap code of one attempt's evidence. */
export interface AttemptGapTable {
  result_id: string;
  run_id: string;
  reason: string;
}

export interface Tables {
  witness_schema: SchemaTable;
  conversations: ConversationTable;
  message_pieces: MessagePieceTable;
  observations: ObservationTable;
  observation_message_pieces: ObservationMessagePieceTable;
  evidence_contents: EvidenceContentTable;
  observation_contents: ObservationContentTable;
  scores: ScoreTable;
  score_observations: ScoreObservationTable;
  score_message_pieces: ScoreMessagePieceTable;
  runs: RunTable;
  attack_results: AttackResultTable;
  run_attacks: RunAttackTable;
  attempt_facts: AttemptFactTable;
  attempt_gaps: AttemptGapTable;
  record_parts: RecordPartTable;
}
