/**
 * `witness/targets`: the agents under test (mock, command, chat-completions, MCP) and their toolboxes.
 */

export type { ChatCompletionsTargetOptions } from '../targets/chat-completions-target.js';
export { ChatCompletionsTarget } from '../targets/chat-completions-target.js';
export type { CommandTargetOptions } from '../targets/command-target.js';
export { CommandTarget } from '../targets/command-target.js';
export type { Instruction } from '../targets/injected-instructions.js';
export { parseInstructions } from '../targets/injected-instructions.js';
export type { McpAgentOptions, McpTargetOptions } from '../targets/mcp-target.js';
export { McpTarget } from '../targets/mcp-target.js';
export type { McpServerOptions } from '../targets/mcp-toolbox.js';
export type { MockAgentOptions } from '../targets/mock-agent-target.js';
export { MockAgentTarget } from '../targets/mock-agent-target.js';
export type { MockMode } from '../targets/mock-planner.js';
export { MOCK_MODES } from '../targets/mock-planner.js';
export type { Target, TargetRequest, TargetResponse } from '../targets/target.js';
export type { CreateTargetContext, TargetConfig } from '../targets/target-config.js';
export { createTarget, TargetConfigSchema } from '../targets/target-config.js';
export type { Toolbox, ToolResult, ToolSpec } from '../targets/toolbox.js';
export { WorkspaceToolbox } from '../targets/toolbox.js';
export type { TranscriptEvent } from '../targets/transcript.js';
export { TranscriptEventSchema } from '../targets/transcript.js';
export type { FileResult, WorkspaceFilesOptions } from '../targets/workspace-files.js';
export { WorkspaceFiles } from '../targets/workspace-files.js';
