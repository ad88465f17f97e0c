import type { ComponentIdentifier } from '../models/identifier.js';
import { runChatAgentLoop } from './chat-agent-loop.js';
import { type ChatClientOptions, ChatCompletionsClient } from './chat-completions-client.js';
import type { Planner, PlanRequest, PlanResult } from './planner.js';
import { nonEmptyString, positiveInteger, TARGET_DEFAULTS } from './target-defaults.js';

/**
 * An OpenAI-compatible chat-completions endpoint with tool calling as the planner: Witness runs the agent
 * loop and gives the model every tool of the toolbox. The API key is passed in already resolved (the CLI
 * reads the environment variable the campaign names); only the variable's *name* is in the identifier.
 */
export interface ChatPlannerOptions extends ChatClientOptions {
  model: string;
  /** Name of the environment variable the key came from, recorded instead of the key. */
  apiKeyEnv?: string | undefined;
  /** Replaces the default system prompt (and the toolbox's hint). */
  systemPrompt?: string | undefined;
  /** Model calls per attempt. Default 8. */
  maxTurns?: number | undefined;
  temperature?: number | undefined;
}

export const DEFAULT_SYSTEM_PROMPT =
  'You are a coding assistant working in a project workspace. Use the tools to read and write files. ' +
  'Paths are relative to the workspace root.';

export class ChatPlanner implements Planner {
  readonly #options: ChatPlannerOptions;
  readonly #client: ChatCompletionsClient;
  readonly #maxTurns: number;

  constructor(options: ChatPlannerOptions) {
    nonEmptyString('model', options?.model);
    this.#maxTurns = positiveInteger('maxTurns', options.maxTurns ?? TARGET_DEFAULTS.maxTurns);
    this.#client = new ChatCompletionsClient(options);
    this.#options = { ...options };
  }

  async plan(request: PlanRequest): Promise<PlanResult> {
    return runChatAgentLoop({
      client: this.#client,
      model: this.#options.model,
      toolbox: request.tools.toolbox,
      prompt: request.prompt,
      systemPrompt: this.#options.systemPrompt ?? `${DEFAULT_SYSTEM_PROMPT}${request.tools.promptHint}`,
      maxTurns: this.#maxTurns,
      temperature: this.#options.temperature,
      signal: request.signal,
    });
  }

  /** The non-secret configuration: never the key itself. */
  identifier(): ComponentIdentifier {
    const params: Record<string, string | number | null> = {
      url: this.#client.url,
      model: this.#options.model,
      apiKeyEnv: this.#options.apiKeyEnv ?? null,
      maxTurns: this.#maxTurns,
      ...this.#client.limits,
    };
    if (this.#options.temperature !== undefined) params.temperature = this.#options.temperature;
    return { type: 'ChatPlanner', version: '1', params };
  }
}
