import { AgentTarget } from './agent-target.js';
import { ChatPlanner, type ChatPlannerOptions } from './chat-planner.js';
import { WorkspaceToolboxProvider } from './toolbox.js';

/**
 * A chat model with Witness's confined file tools (`read_file`, `write_file`, `list_dir`): the agent
 * target of a `kind: chat` campaign.
 */
export type ChatCompletionsTargetOptions = ChatPlannerOptions;

export class ChatCompletionsTarget extends AgentTarget {
  constructor(options: ChatCompletionsTargetOptions) {
    super({ planner: new ChatPlanner(options), toolbox: new WorkspaceToolboxProvider() });
  }
}
