import { AgentTarget } from './agent-target.js';
import { ChatPlanner, type ChatPlannerOptions } from './chat-planner.js';
import type { McpServerOptions } from './mcp-toolbox.js';
import { McpToolboxProvider } from './mcp-toolbox-provider.js';
import { MockPlanner, type MockPlannerOptions } from './mock-planner.js';

/**
 * An agent whose tools come from an MCP server (one server process per attempt, on that attempt's
 * workspace), driven by the mock planner or a chat model: the agent target of a `kind: mcp` campaign.
 */
export type McpAgentOptions =
  | ({ planner: 'mock' } & MockPlannerOptions)
  | ({ planner: 'chat' } & ChatPlannerOptions);

export interface McpTargetOptions {
  server: McpServerOptions;
  agent: McpAgentOptions;
}

export class McpTarget extends AgentTarget {
  constructor(options: McpTargetOptions) {
    const toolbox = new McpToolboxProvider(options.server);
    const { agent } = options;
    const planner = agent.planner === 'mock' ? new MockPlanner(agent) : new ChatPlanner(agent);
    super({ planner, toolbox });
  }
}
