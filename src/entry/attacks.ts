/**
 * `witness/attacks`: campaigns — their schema and file loader, the runner, outcomes, reports and
 * workspaces. Loads the targets (and so the MCP SDK) a campaign can name.
 */

export { chainIdOf, chainOutcome, runChain } from '../attacks/attack-chain.js';
export type { AttackerFeedback, AttackerModel, AttackerReply } from '../attacks/attacker-model.js';
export { AttackerError, ChatAttackerModel } from '../attacks/attacker-model.js';
export type { Attack, Attacker, Campaign, CampaignInput, Expect } from '../attacks/campaign.js';
export {
  AttackerSchema,
  AttackSchema,
  attackExpectation,
  buildCondition,
  CampaignSchema,
  taskExpectation,
} from '../attacks/campaign.js';
export { loadCampaignFile, parseCampaign } from '../attacks/campaign-file.js';
export { tuneAcquisitionThreadsForCampaign } from '../attacks/campaign-threads.js';
export { DEMO_MODES, demoCampaign } from '../attacks/demo-campaign.js';
export type {
  BaitFinding,
  Carrier,
  LibraryAttack,
  LibraryCatalog,
  LibraryExpect,
  LibraryGroup,
  LibraryRef,
  MatrixInput,
  Objective,
  Strategy,
} from '../attacks/library/index.js';
export {
  BAIT_STATUSES,
  buildLibraryAttack,
  CARRIER_IDS,
  checkAllBait,
  checkBait,
  describeLibrary,
  expandCampaignMatrix,
  expandMatrix,
  groupByLibrary,
  LibraryRefSchema,
  libraryRefOf,
  listCarriers,
  listObjectives,
  listStrategies,
  MatrixSchema,
  OBJECTIVE_IDS,
  STRATEGY_IDS,
} from '../attacks/library/index.js';
export type {
  AttemptOutcome,
  ControlTotals,
  FailOnOutcome,
  OutcomeTotals,
  UtilityTotals,
} from '../attacks/outcome.js';
export {
  attemptLabel,
  attemptOutcome,
  decidingAttempts,
  FAIL_ON_OUTCOMES,
  formatSuccessRate,
  formatUtility,
  gateFailures,
  tallyAttempts,
  tallyOutcomes,
} from '../attacks/outcome.js';
export type { AttemptRecorder } from '../attacks/run-attempt.js';
export type {
  CampaignResult,
  ProgressEvent,
  RunCampaignOptions,
  StreamedCampaignOptions,
  StreamedCampaignResult,
} from '../attacks/run-campaign.js';
export { runCampaign, runCampaignStreamed } from '../attacks/run-campaign.js';
export type { PlantedFile, Workspace, WorkspaceSpec } from '../attacks/workspace.js';
export { createWorkspace } from '../attacks/workspace.js';
export type { RenderReportOptions, ReportRun } from '../render/report-html.js';
export { renderReportHtml } from '../render/report-html.js';
export type { CompactAttempt, ReportBounds } from '../render/report-run.js';
export { DEFAULT_REPORT_BOUNDS, ReportCollector, reportRunOf } from '../render/report-run.js';
export type { RunCounts, RunSummary } from '../render/run-summary.js';
export { summarizeRun } from '../render/run-summary.js';
export { renderAttemptTable, renderTotals } from '../render/summary-table.js';
