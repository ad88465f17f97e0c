import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { TargetError } from '../errors.js';
import type { JsonObject } from '../models/record.js';
import type { Toolbox, ToolResult, ToolSpec } from './toolbox.js';
import type { TranscriptEvent } from './transcript.js';

/**
 * Tools served by an MCP server over stdio, started for one attempt with the workspace as its working
 * directory and `{workspace}` in its arguments replaced by the workspace path. Confinement is the server's
 * own (the reference filesystem server refuses paths outside the directories it was given); Witness adds
 * none, so the campaign must start the server on `{workspace}` only.
 */

export interface McpServerOptions {
  command: string;
  /** Arguments; every `{workspace}` is replaced by the attempt's workspace path. */
  args?: readonly string[] | undefined;
  /** Extra environment variables (added to the SDK's safe default set: HOME, PATH, ...). */
  env?: Readonly<Record<string, string>> | undefined;
  /** Bound on starting the server and on each tool call. Default 30,000 ms. */
  timeoutMs?: number | undefined;
}

const MAX_STDERR_CHARS = 8_192;

export class McpToolbox implements Toolbox {
  readonly #client: Client;
  readonly #transport: StdioClientTransport;
  readonly #timeoutMs: number;
  readonly #stderr: string[] = [];
  #tools: ToolSpec[] | undefined;

  private constructor(client: Client, transport: StdioClientTransport, timeoutMs: number) {
    this.#client = client;
    this.#transport = transport;
    this.#timeoutMs = timeoutMs;
    transport.stderr?.on('data', (chunk: Buffer) => {
      if (this.#stderr.join('').length < MAX_STDERR_CHARS) this.#stderr.push(chunk.toString('utf8'));
    });
  }

  /** Starts the server and completes the MCP handshake; a server that fails to start is a TargetError. */
  static async start(
    options: McpServerOptions,
    workspace: string,
    transcript: TranscriptEvent[],
    signal?: AbortSignal,
  ): Promise<McpToolbox> {
    const timeoutMs = options.timeoutMs ?? 30_000;
    const args = (options.args ?? []).map((arg) => arg.split('{workspace}').join(workspace));
    const transport = new StdioClientTransport({
      command: options.command,
      args,
      cwd: workspace,
      env: { ...getDefaultEnvironment(), ...options.env },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'witness', version: '0.1.0' });
    const toolbox = new McpToolbox(client, transport, timeoutMs);
    transcript.push({ kind: 'note', text: `started MCP server: ${[options.command, ...args].join(' ')}` });
    try {
      await client.connect(transport, { timeout: timeoutMs, signal });
    } catch (error) {
      await toolbox.close();
      if (signal?.aborted) throw signal.reason;
      const stderr = toolbox.stderr();
      throw new TargetError(
        `the MCP server did not start: ${(error as Error).message}${stderr === '' ? '' : `; stderr: ${stderr.slice(0, 500)}`}`,
        transcript,
        { cause: error },
      );
    }
    return toolbox;
  }

  async list(): Promise<ToolSpec[]> {
    if (this.#tools === undefined) {
      const { tools } = await this.#client.listTools(undefined, { timeout: this.#timeoutMs });
      this.#tools = tools.map((tool) => ({
        name: tool.name,
        description: tool.description ?? '',
        inputSchema: tool.inputSchema as JsonObject,
      }));
    }
    return structuredClone(this.#tools);
  }

  async call(name: string, args: unknown, signal?: AbortSignal): Promise<ToolResult> {
    signal?.throwIfAborted();
    try {
      const result = await this.#client.callTool(
        { name, arguments: (args ?? {}) as Record<string, unknown> },
        undefined,
        { signal, timeout: this.#timeoutMs },
      );
      const content = Array.isArray(result.content) ? result.content : [];
      const text = content
        .map((part: { type: string; text?: string }) =>
          part.type === 'text' ? (part.text ?? '') : `(${part.type} content)`,
        )
        .join('\n');
      return { ok: result.isError !== true, text };
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      return { ok: false, text: `the MCP tool call failed: ${(error as Error).message}` };
    }
  }

  /** What the server wrote to stderr (bounded). */
  stderr(): string {
    return this.#stderr.join('').slice(0, MAX_STDERR_CHARS);
  }

  async close(): Promise<void> {
    await this.#client.close().catch(() => undefined);
    await this.#transport.close().catch(() => undefined);
  }
}
