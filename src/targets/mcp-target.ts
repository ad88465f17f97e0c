import { posix } from 'node:path';
import { InvalidOptionError } from '../errors.js';
import type { ComponentIdentifier } from '../models/identifier.js';
import type { Containment } from '../models/vocabulary.js';
import { runChatAgentLoop } from './chat-agent-loop.js';
import { ChatCompletionsClient } from './chat-completions-client.js';
import {
  type ChatCompletionsTargetOptions,
  chatIdentifier,
  DEFAULT_SYSTEM_PROMPT,
} from './chat-completions-target.js';
import { type McpServerOptions, McpToolbox } from './mcp-toolbox.js';
import { type FileToolMapping, MOCK_MODES, type MockMode, runMockPlanner } from './mock-planner.js';
import type { Target, TargetRequest, TargetResponse } from './target.js';
import type { ToolSpec } from './toolbox.js';
import type { TranscriptEvent } from './transcript.js';

/**
 * An agent whose tools come from an MCP server (one server process per attempt, on that attempt's
 * workspace). Who decides which tools to call is configurable:
 * - `planner: mock` — the mock agent's deterministic planner (no network, no key). It needs a read and a
 *   write tool; it uses `read_text_file` (or `read_file`) and `write_file` with absolute paths under the
 *   workspace, creating the parent with `create_directory` first when the server offers it. This is how
 *   the reference filesystem server is exercised in tests and examples.
 * - `planner: chat` — an OpenAI-compatible chat endpoint, given every tool the server lists.
 */
export type McpAgentOptions =
  | { planner: 'mock'; mode: MockMode; discloseActions?: boolean | undefined }
  | ({ planner: 'chat' } & ChatCompletionsTargetOptions);

export interface McpTargetOptions {
  server: McpServerOptions;
  agent: McpAgentOptions;
}

export class McpTarget implements Target {
  readonly #options: McpTargetOptions;
  readonly #client: ChatCompletionsClient | undefined;

  constructor(options: McpTargetOptions) {
    if (typeof options.server?.command !== 'string' || options.server.command === '') {
      throw new InvalidOptionError('server.command must name the MCP server program');
    }
    const agent = options.agent;
    if (agent.planner === 'mock' && !MOCK_MODES.includes(agent.mode)) {
      throw new InvalidOptionError(`agent.mode must be one of ${MOCK_MODES.join(', ')}`);
    }
    this.#client = agent.planner === 'chat' ? new ChatCompletionsClient(agent) : undefined;
    this.#options = options;
  }

  async send(request: TargetRequest): Promise<TargetResponse> {
    const transcript: TranscriptEvent[] = [];
    const toolbox = await McpToolbox.start(
      this.#options.server,
      request.workspace,
      transcript,
      request.signal,
      request.attempt,
    );
    try {
      const agent = this.#options.agent;
      if (agent.planner === 'mock') {
        const mapping = mcpFileMapping(await toolbox.list(), request.workspace);
        const result = await runMockPlanner({
          prompt: request.prompt,
          mode: agent.mode,
          toolbox,
          mapping,
          discloseActions: agent.discloseActions,
          signal: request.signal,
        });
        return { reply: result.reply, transcript: [...transcript, ...result.transcript] };
      }
      const result = await runChatAgentLoop({
        client: this.#client as ChatCompletionsClient,
        model: agent.model,
        toolbox,
        prompt: request.prompt,
        systemPrompt: agent.systemPrompt ?? `${DEFAULT_SYSTEM_PROMPT} The workspace is ${request.workspace}.`,
        maxTurns: agent.maxTurns ?? 8,
        temperature: agent.temperature,
        signal: request.signal,
      });
      return { reply: result.reply, transcript: [...transcript, ...result.transcript] };
    } finally {
      const stderr = toolbox.stderr();
      await toolbox.close();
      if (stderr !== '') transcript.push({ kind: 'note', text: `MCP server stderr: ${stderr}` });
    }
  }

  containment(): Containment {
    return this.#options.server.sandbox?.containment.mode ?? 'bwrap';
  }

  identifier(): ComponentIdentifier {
    const { server, agent } = this.#options;
    const serverId: ComponentIdentifier = {
      type: 'McpStdioServer',
      version: '1',
      params: {
        command: server.command,
        args: [...(server.args ?? [])],
        envNames: Object.keys(server.env ?? {}).sort(),
      },
    };
    if (agent.planner === 'chat') {
      return chatIdentifier('McpTarget', this.#client as ChatCompletionsClient, agent, agent.maxTurns ?? 8, {
        server: serverId,
      });
    }
    return {
      type: 'McpTarget',
      version: '1',
      params: { planner: 'mock', mode: agent.mode, discloseActions: agent.discloseActions === true },
      children: { server: serverId },
    };
  }
}

/** Maps the mock planner's read/write onto the reference filesystem server's tools. */
export function mcpFileMapping(tools: readonly ToolSpec[], workspace: string): FileToolMapping {
  const names = new Set(tools.map((tool) => tool.name));
  const readTool = names.has('read_text_file') ? 'read_text_file' : 'read_file';
  const absolute = (path: string) => posix.join(workspace, path.replace(/^\/+/, ''));
  return {
    read: (path) => ({ name: readTool, args: { path: absolute(path) } }),
    write: (path, content) => {
      const target = absolute(path);
      const steps = [{ name: 'write_file', args: { path: target, content } }];
      return names.has('create_directory')
        ? [{ name: 'create_directory', args: { path: posix.dirname(target) } }, ...steps]
        : steps;
    },
  };
}
