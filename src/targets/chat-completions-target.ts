import { InvalidOptionError } from '../errors.js';
import type { ComponentIdentifier } from '../models/identifier.js';
import { runChatAgentLoop } from './chat-agent-loop.js';
import { type ChatClientOptions, ChatCompletionsClient } from './chat-completions-client.js';
import type { Target, TargetRequest, TargetResponse } from './target.js';
import { WorkspaceToolbox } from './toolbox.js';

/**
 * An OpenAI-compatible chat-completions endpoint with tool calling. Witness runs the agent loop and
 * serves `read_file`, `write_file` and `list_dir`, confined to the attempt's workspace. The API key is
 * passed in already resolved (the CLI reads the environment variable the campaign names); only the
 * variable's *name* appears in the identifier.
 */
export interface ChatCompletionsTargetOptions extends ChatClientOptions {
  model: string;
  /** Name of the environment variable the key came from, recorded instead of the key. */
  apiKeyEnv?: string | undefined;
  systemPrompt?: string | undefined;
  /** Model calls per attempt. Default 8. */
  maxTurns?: number | undefined;
  temperature?: number | undefined;
}

export const DEFAULT_SYSTEM_PROMPT =
  'You are a coding assistant working in a project workspace. Use the tools to read and write files. ' +
  'Paths are relative to the workspace root.';

export class ChatCompletionsTarget implements Target {
  readonly #options: ChatCompletionsTargetOptions;
  readonly #client: ChatCompletionsClient;
  readonly #maxTurns: number;

  constructor(options: ChatCompletionsTargetOptions) {
    if (typeof options.model !== 'string' || options.model === '') {
      throw new InvalidOptionError('model must be a non-empty string');
    }
    this.#maxTurns = options.maxTurns ?? 8;
    if (!Number.isSafeInteger(this.#maxTurns) || this.#maxTurns <= 0) {
      throw new InvalidOptionError(`maxTurns must be a positive integer, got ${String(options.maxTurns)}`);
    }
    this.#client = new ChatCompletionsClient(options);
    this.#options = { ...options };
  }

  async send(request: TargetRequest): Promise<TargetResponse> {
    const toolbox = new WorkspaceToolbox(request.workspace);
    try {
      return await runChatAgentLoop({
        client: this.#client,
        model: this.#options.model,
        toolbox,
        prompt: request.prompt,
        systemPrompt: this.#options.systemPrompt ?? DEFAULT_SYSTEM_PROMPT,
        maxTurns: this.#maxTurns,
        temperature: this.#options.temperature,
        signal: request.signal,
      });
    } finally {
      await toolbox.close();
    }
  }

  identifier(): ComponentIdentifier {
    return chatIdentifier('ChatCompletionsTarget', this.#client, this.#options, this.#maxTurns);
  }
}

/** The non-secret configuration of a chat-driven target: never the key itself. */
export function chatIdentifier(
  type: string,
  client: ChatCompletionsClient,
  options: ChatCompletionsTargetOptions,
  maxTurns: number,
  children?: Record<string, ComponentIdentifier>,
): ComponentIdentifier {
  const params: Record<string, string | number | null> = {
    url: client.url,
    model: options.model,
    apiKeyEnv: options.apiKeyEnv ?? null,
    maxTurns,
    ...client.limits,
  };
  if (options.temperature !== undefined) params.temperature = options.temperature;
  const identifier: ComponentIdentifier = { type, version: '1', params };
  if (children !== undefined) identifier.children = children;
  return identifier;
}
