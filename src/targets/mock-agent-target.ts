import { AgentTarget } from './agent-target.js';
import { MockPlanner, type MockPlannerOptions } from './mock-planner.js';
import { WorkspaceToolboxProvider } from './toolbox.js';

/**
 * The mock planner with Witness's confined file tools: the agent that needs no model, no network and no
 * key. `vulnerable` follows instructions it finds in files (prompt injection works), `guarded` does not;
 * either way its reply claims only a summary (see `mock-planner.ts`).
 */
export type MockAgentOptions = MockPlannerOptions;

export class MockAgentTarget extends AgentTarget {
  constructor(options: MockAgentOptions) {
    super({ planner: new MockPlanner(options), toolbox: new WorkspaceToolboxProvider() });
  }
}
