import type { ComponentIdentifier } from '../models/identifier.js';
import type { Containment } from '../models/vocabulary.js';
import type { Planner } from './planner.js';
import type { AttemptPreparation, PreparedAttempt, Target, TargetRequest, TargetResponse } from './target.js';
import type { ToolboxProvider } from './toolbox.js';
import type { TranscriptEvent } from './transcript.js';

/**
 * An agent is a planner × a toolbox: who decides (the mock planner, a chat model) and which tools it has
 * (Witness's confined workspace tools, an MCP server's). Each attempt opens the toolbox on its own
 * workspace, lets the planner work, and closes the toolbox whatever happened, so no server outlives the
 * attempt it was started for.
 *
 * ```ts
 * const target = new AgentTarget({ planner: new MockPlanner({ mode: 'vulnerable' }), toolbox: new WorkspaceToolboxProvider() });
 * const { reply } = await target.send({ prompt: 'Summarize README.md', workspace: '/tmp/ws' });
 * ```
 */
export interface AgentTargetOptions {
  planner: Planner;
  toolbox: ToolboxProvider;
}

export class AgentTarget implements Target {
  readonly #planner: Planner;
  readonly #toolbox: ToolboxProvider;

  constructor(options: AgentTargetOptions) {
    this.#planner = options.planner;
    this.#toolbox = options.toolbox;
  }

  /**
   * Readies the attempt for a toolbox that starts processes (an MCP server) before the baseline (SPEC
   * §13); the planner itself runs inside Witness and needs nothing.
   */
  async prepareAttempt(request: AttemptPreparation): Promise<PreparedAttempt> {
    const prepared = (await this.#toolbox.prepareAttempt?.(request)) ?? { shownPaths: [] };
    return {
      agentState: [],
      shownPaths: prepared.shownPaths,
      send: (sent) => this.send(sent),
      close: async () => undefined,
    };
  }

  async send(request: TargetRequest): Promise<TargetResponse> {
    const opening: TranscriptEvent[] = [];
    const tools = await this.#toolbox.open(request.workspace, opening, request.signal, request.attempt);
    let closed = false;
    try {
      const result = await this.#planner.plan({
        prompt: request.prompt,
        workspace: request.workspace,
        tools,
        signal: request.signal,
      });
      closed = true;
      const closing = await tools.close();
      return { reply: result.reply, transcript: [...opening, ...result.transcript, ...closing] };
    } finally {
      // A planner that failed (or was aborted) still leaves no server running.
      if (!closed) await tools.close();
    }
  }

  containment(): Containment {
    return this.#toolbox.containment?.() ?? 'in_process';
  }

  identifier(): ComponentIdentifier {
    return {
      type: 'AgentTarget',
      version: '1',
      params: {},
      children: { planner: this.#planner.identifier(), toolbox: this.#toolbox.identifier() },
    };
  }
}
