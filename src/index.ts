/**
 * The public surface of Witness: everything exported here is stable; anything not listed is internal.
 */

export type { AttemptRecord, CampaignRun } from './attacks/attempt-record.js';
export { AttemptRecordSchema, CampaignRunSchema } from './attacks/attempt-record.js';
export type { Attack, Campaign, CampaignInput, Expect } from './attacks/campaign.js';
export { AttackSchema, attackExpectation, buildCondition, CampaignSchema } from './attacks/campaign.js';
export { loadCampaignFile, parseCampaign } from './attacks/campaign-file.js';
export { demoCampaign } from './attacks/demo-campaign.js';
export type { AttemptOutcome, ControlTotals, FailOnOutcome, OutcomeTotals } from './attacks/outcome.js';
export {
  attemptLabel,
  attemptOutcome,
  FAIL_ON_OUTCOMES,
  formatSuccessRate,
  gateFailures,
  tallyAttempts,
  tallyOutcomes,
} from './attacks/outcome.js';
export type { RenderReportOptions, ReportRun } from './attacks/report-html.js';
export { renderReportHtml } from './attacks/report-html.js';
export type { AttemptRecorder } from './attacks/run-attempt.js';
export type { CampaignResult, ProgressEvent, RunCampaignOptions } from './attacks/run-campaign.js';
export { runCampaign } from './attacks/run-campaign.js';
export { renderAttemptTable, renderTotals } from './attacks/summary-table.js';
export type { PlantedFile, Workspace, WorkspaceSpec } from './attacks/workspace.js';
export { createWorkspace } from './attacks/workspace.js';
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
  SchemaTooNewError,
  TargetError,
  UndeterminedScoreError,
  WitnessError,
} from './errors.js';
export { DEFAULT_REGEX_TIMEOUT_MS, matchText } from './matching/text-matcher.js';
export type { ArchiveRecord, ArchiveRecordType, ImportSummary } from './memory/archive.js';
export {
  ArchiveHeaderSchema,
  ArchiveRecordSchema,
  archiveHeaderLine,
  formatArchiveLine,
  parseArchiveLines,
} from './memory/archive.js';
export type {
  AttackResultFilter,
  Memory,
  MemoryLocation,
  NewConversation,
  NewMessage,
  ScoreFilter,
} from './memory/memory.js';
export { MEMORY_SCHEMA_VERSION } from './memory/migrations.js';
export type { OpenMemoryOptions } from './memory/open-memory.js';
export { openMemory } from './memory/open-memory.js';
export type { AttackResult, AttemptWorkspace } from './models/attack-result.js';
export {
  AttackOutcomeSchema,
  AttackResultSchema,
  AttemptWorkspaceSchema,
  outcomeOf,
} from './models/attack-result.js';
export type { Change, ChangeSet, SurfaceChanges } from './models/change-set.js';
export { ChangeSchema, ChangeSetSchema, countChanges, SurfaceChangesSchema } from './models/change-set.js';
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
  checkObservation,
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
export type {
  AcquisitionStatus,
  AttackOutcome,
  GapReason,
  MatcherType,
  MatchKind,
  MessageRole,
  ScoreStatus,
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
export type { SourceLimits } from './sources/local-file/limits.js';
export { DEFAULT_LIMITS } from './sources/local-file/limits.js';
export type { LocalFileSurfaceSourceOptions } from './sources/local-file-source.js';
export { LocalFileSurfaceSource } from './sources/local-file-source.js';
export type { AcquireOptions, SurfaceSource } from './sources/surface-source.js';
export type { ChatCompletionsTargetOptions } from './targets/chat-completions-target.js';
export { ChatCompletionsTarget } from './targets/chat-completions-target.js';
export type { CommandTargetOptions } from './targets/command-target.js';
export { CommandTarget } from './targets/command-target.js';
export type { Instruction } from './targets/injected-instructions.js';
export { parseInstructions } from './targets/injected-instructions.js';
export type { McpAgentOptions, McpTargetOptions } from './targets/mcp-target.js';
export { McpTarget } from './targets/mcp-target.js';
export type { McpServerOptions } from './targets/mcp-toolbox.js';
export type { MockAgentOptions } from './targets/mock-agent-target.js';
export { MockAgentTarget } from './targets/mock-agent-target.js';
export type { MockMode } from './targets/mock-planner.js';
export { MOCK_MODES } from './targets/mock-planner.js';
export type { Target, TargetRequest, TargetResponse } from './targets/target.js';
export type { CreateTargetContext, TargetConfig } from './targets/target-config.js';
export { createTarget, TargetConfigSchema } from './targets/target-config.js';
export type { Toolbox, ToolResult, ToolSpec } from './targets/toolbox.js';
export { WorkspaceToolbox } from './targets/toolbox.js';
export type { TranscriptEvent } from './targets/transcript.js';
export { TranscriptEventSchema } from './targets/transcript.js';
export type { FileResult, WorkspaceFilesOptions } from './targets/workspace-files.js';
export { WorkspaceFiles } from './targets/workspace-files.js';
export type { ContentWrittenJudgement } from './verdicts/content-written.js';
export { judgeContentWritten } from './verdicts/content-written.js';
export type { ChangeEvidence, SinceBaselineJudgement } from './verdicts/content-written-since-baseline.js';
export { judgeContentWrittenSinceBaseline } from './verdicts/content-written-since-baseline.js';
export { diffManifests } from './verdicts/diff-manifests.js';
export type { ChangeJudgement } from './verdicts/file-change-rule.js';
export { judgeFileCreated } from './verdicts/file-created.js';
export { judgeFileDeleted } from './verdicts/file-deleted.js';
export { judgeFileModified } from './verdicts/file-modified.js';
