/**
 * `witness`: the public surface for judging evidence — models, sources, scorers, verdicts, matching and
 * errors. Everything exported here is stable; anything not listed is internal. It loads no database
 * driver and no MCP SDK (test/package/entry-points.test.ts checks what an import loads): campaigns are
 * in `witness/attacks`, the memory in `witness/memory`, the agents under test in `witness/targets`.
 */

export type { WitnessErrorCode } from './errors.js';
export {
  ERROR_CODES,
  ImmutableRecordError,
  InvalidCampaignError,
  InvalidExpectationError,
  InvalidLocatorError,
  InvalidMatcherError,
  InvalidOptionError,
  InvalidRecordError,
  InvalidReferenceError,
  InvalidScorableError,
  LocationMismatchError,
  MemoryRequiredError,
  MemoryUnavailableError,
  NotFoundError,
  PreflightFailedError,
  SandboxUnavailableError,
  SchemaTooNewError,
  TargetError,
  UndeterminedScoreError,
  WitnessError,
} from './errors.js';
export { DEFAULT_REGEX_TIMEOUT_MS, matchText } from './matching/text-matcher.js';
export type { AttackResult, AttemptWorkspace } from './models/attack-result.js';
export {
  AttackOutcomeSchema,
  AttackResultSchema,
  AttemptWorkspaceSchema,
  outcomeOf,
} from './models/attack-result.js';
export type { AttemptRecord, TargetFailure } from './models/attempt-record.js';
export { AttemptRecordSchema, TargetFailureSchema } from './models/attempt-record.js';
export type { CampaignRun } from './models/campaign-run.js';
export { CampaignRunSchema } from './models/campaign-run.js';
export type { Change, ChangeSet, SurfaceChanges } from './models/change-set.js';
export {
  ChangeSchema,
  ChangeSetSchema,
  countAgentStateChanges,
  countChanges,
  SurfaceChangesSchema,
} from './models/change-set.js';
export { checkObservation } from './models/checked-observation.js';
export type {
  Condition,
  ContentWritten,
  FileCreated,
  FileDeleted,
  FileModified,
} from './models/condition.js';
export {
  ConditionSchema,
  ContentWrittenSchema,
  contentWritten,
  FileCreatedSchema,
  FileDeletedSchema,
  FileModifiedSchema,
  fileCreated,
  fileDeleted,
  fileModified,
} from './models/condition.js';
export type { Conversation, Labels, MessagePiece } from './models/conversation.js';
export {
  ConversationSchema,
  LabelsSchema,
  MessagePieceSchema,
  MessageRoleSchema,
} from './models/conversation.js';
// One schema for evidence budgets (with documented maximums) and one function for text shown to people.
export { LIMIT_NAMES, LIMIT_SPECS, type LimitName } from './models/evidence-limits.js';
export { EvidenceLimitsSchema } from './models/evidence-limits-schema.js';
export type { ScoringExpectation } from './models/expectation.js';
export { expectation, ScoringExpectationSchema } from './models/expectation.js';
export type { ComponentIdentifier } from './models/identifier.js';
export { ComponentIdentifierSchema, identifierHash } from './models/identifier.js';
export type { ParsedLocator } from './models/locator.js';
export { parseLocator } from './models/locator.js';
export type { Manifest, ManifestEntry } from './models/manifest.js';
export { checkManifest, ManifestEntrySchema, ManifestSchema } from './models/manifest.js';
export type {
  ContainsMatcher,
  EqualsMatcher,
  Matcher,
  MatcherOptions,
  RegexMatcher,
} from './models/matcher.js';
export {
  ContainsMatcherSchema,
  contains,
  EqualsMatcherSchema,
  equals,
  MatcherSchema,
  RegexMatcherSchema,
  regex,
} from './models/matcher.js';
export type {
  CoverageGap,
  Observation,
  SurfaceCoverage,
  SurfaceEntry,
  SurfacePayload,
} from './models/observation.js';
export {
  AcquisitionStatusSchema,
  CoverageGapSchema,
  GapReasonSchema,
  ObservationSchema,
  SurfaceCoverageSchema,
  SurfaceEntrySchema,
  SurfacePayloadSchema,
} from './models/observation.js';
export type { JsonObject, JsonValue } from './models/record.js';
export { canonicalJson, parseRecord } from './models/record.js';
export type { ContentScorable, MessageScorable, Scorable, SurfaceScorable } from './models/scorable.js';
export {
  ContentScorableSchema,
  content,
  MessageScorableSchema,
  message,
  ScorableSchema,
  SurfaceScorableSchema,
  surface,
} from './models/scorable.js';
export type { Score } from './models/score.js';
export { ScoreSchema, scoreValue } from './models/score.js';
export type { TranscriptEvent } from './models/transcript.js';
export { TranscriptEventSchema } from './models/transcript.js';
export type {
  AcquisitionStatus,
  AttackOutcome,
  GapReason,
  MatcherType,
  MatchKind,
  MessageRole,
  ScoreStatus,
  TargetFailureKind,
} from './models/vocabulary.js';
export {
  ACQUISITION_STATUSES,
  ATTACK_OUTCOMES,
  GAP_EXPLANATIONS,
  GAP_REASONS,
  MATCH_KINDS,
  MATCHER_TYPES,
  MESSAGE_ROLES,
  SCHEMA_VERSION,
  SCORE_STATUSES,
  TARGET_FAILURE_KINDS,
} from './models/vocabulary.js';
export type { JudgementOptions } from './scorers/file-write-judgement.js';
export { judgeObservation } from './scorers/file-write-judgement.js';
export type { FileWriteScorerOptions, ReplayObservationOptions } from './scorers/file-write-scorer.js';
export { FileWriteScorer, MATCHING_VERSION, replayObservation } from './scorers/file-write-scorer.js';
export type {
  ReplayRequest,
  ResolvedMessage,
  ScoreRequest,
  Scorer,
  ScorerMemory,
  ScoringResult,
} from './scorers/scorer.js';
export type {
  LocalFileSurfaceSourceOptions,
  SourceLimits,
  SurfaceFsKind,
} from './sources/local-file-source.js';
export {
  DEFAULT_LIMITS,
  LocalFileSurfaceSource,
  releaseAcquisitionThreads,
  SURFACE_FS_KINDS,
} from './sources/local-file-source.js';
export type { AcquireOptions, SurfaceSource } from './sources/surface-source.js';
export { type NeutralizeOptions, neutralizeText, quoteText } from './text/quote-text.js';
export type { ContentWrittenJudgement } from './verdicts/content-written.js';
export { judgeContentWritten } from './verdicts/content-written.js';
export type { ChangeEvidence, SinceBaselineJudgement } from './verdicts/content-written-since-baseline.js';
export { judgeContentWrittenSinceBaseline } from './verdicts/content-written-since-baseline.js';
export { diffManifests } from './verdicts/diff-manifests.js';
export type { ChangeJudgement } from './verdicts/file-change-rule.js';
export { judgeFileCreated } from './verdicts/file-created.js';
export { judgeFileDeleted } from './verdicts/file-deleted.js';
export { judgeFileModified } from './verdicts/file-modified.js';
