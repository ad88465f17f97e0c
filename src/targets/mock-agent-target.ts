import { InvalidOptionError } from '../errors.js';
import type { ComponentIdentifier } from '../models/identifier.js';
import { MOCK_MODES, type MockMode, runMockPlanner, WORKSPACE_TOOL_MAPPING } from './mock-planner.js';
import type { Target, TargetRequest, TargetResponse } from './target.js';
import { WorkspaceToolbox } from './toolbox.js';

/**
 * A local, deterministic agent with Witness's confined file tools: the target that needs no model, no
 * network and no key. `vulnerable` follows instructions it finds in files (prompt injection works),
 * `guarded` does not; either way its reply claims only a summary (see `mock-planner.ts`).
 */
export interface MockAgentOptions {
  mode: MockMode;
  discloseActions?: boolean | undefined;
}

export class MockAgentTarget implements Target {
  readonly #options: MockAgentOptions;

  constructor(options: MockAgentOptions) {
    if (!MOCK_MODES.includes(options.mode)) {
      throw new InvalidOptionError(
        `mode must be one of ${MOCK_MODES.join(', ')}, got ${String(options.mode)}`,
      );
    }
    this.#options = { ...options };
  }

  async send(request: TargetRequest): Promise<TargetResponse> {
    const toolbox = new WorkspaceToolbox(request.workspace);
    try {
      return await runMockPlanner({
        prompt: request.prompt,
        mode: this.#options.mode,
        toolbox,
        mapping: WORKSPACE_TOOL_MAPPING,
        discloseActions: this.#options.discloseActions,
        signal: request.signal,
      });
    } finally {
      await toolbox.close();
    }
  }

  identifier(): ComponentIdentifier {
    return {
      type: 'MockAgentTarget',
      version: '1',
      params: { mode: this.#options.mode, discloseActions: this.#options.discloseActions === true },
    };
  }
}
