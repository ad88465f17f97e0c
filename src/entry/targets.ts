/**
 * `witness/targets`: the agents under test (mock, command, chat-completions, MCP) and their toolboxes.
 */

export type { ModelServerOptions, RunningModelServer } from '../model-server/model-server.js';
export { startModelServer } from '../model-server/model-server.js';
export type { AgentTargetOptions } from '../targets/agent-target.js';
export { AgentTarget } from '../targets/agent-target.js';
export type { ChatCompletionsTargetOptions } from '../targets/chat-completions-target.js';
export { ChatCompletionsTarget } from '../targets/chat-completions-target.js';
export type { ChatPlannerOptions } from '../targets/chat-planner.js';
export { ChatPlanner } from '../targets/chat-planner.js';
export type { CommandTargetOptions } from '../targets/command-target.js';
export { CommandTarget } from '../targets/command-target.js';
export type { CreateTargetContext } from '../targets/create-target.js';
export { createTarget } from '../targets/create-target.js';
export { HTTP_REQUEST_TOOL } from '../targets/http-request-tool.js';
export type { Instruction } from '../targets/injected-instructions.js';
export { parseInstructions } from '../targets/injected-instructions.js';
export type { McpAgentOptions, McpTargetOptions } from '../targets/mcp-target.js';
export { McpTarget } from '../targets/mcp-target.js';
export type { McpServerOptions } from '../targets/mcp-toolbox.js';
export { McpToolboxProvider } from '../targets/mcp-toolbox-provider.js';
export type { MockAgentOptions } from '../targets/mock-agent-target.js';
export { MockAgentTarget } from '../targets/mock-agent-target.js';
export type { MockMode } from '../targets/mock-modes.js';
export { MOCK_MODES } from '../targets/mock-modes.js';
export type { MockPlannerOptions } from '../targets/mock-planner.js';
export { MockPlanner } from '../targets/mock-planner.js';
export type { Planner, PlanRequest, PlanResult } from '../targets/planner.js';
export type { PresetAgentTargetOptions } from '../targets/preset-agent-target.js';
export { PresetAgentTarget } from '../targets/preset-agent-target.js';
export type { AgentInvocation, AgentPreset, AgentPresetName } from '../targets/presets/agent-preset.js';
export { AGENT_PRESETS } from '../targets/presets/agent-preset.js';
export type { RecordingProxy, RecordingProxyOptions } from '../targets/recording-proxy.js';
export { startRecordingProxy } from '../targets/recording-proxy.js';
export type { Target, TargetRequest, TargetResponse } from '../targets/target.js';
export type { PlannerConfig, TargetConfig, ToolboxConfig } from '../targets/target-config.js';
export {
  PlannerConfigSchema,
  TargetConfigSchema,
  ToolboxConfigSchema,
} from '../targets/target-config.js';
export { TARGET_DEFAULTS } from '../targets/target-defaults.js';
export type {
  FileToolMapping,
  OpenedToolbox,
  Toolbox,
  ToolboxProvider,
  ToolInvocation,
  ToolResult,
  ToolSpec,
  WorkspaceToolboxOptions,
} from '../targets/toolbox.js';
export { WorkspaceToolbox, WorkspaceToolboxProvider } from '../targets/toolbox.js';
export type { FileResult, WorkspaceFilesOptions } from '../targets/workspace-files.js';
export { WorkspaceFiles } from '../targets/workspace-files.js';
