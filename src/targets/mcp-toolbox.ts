import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { TargetError } from '../errors.js';
import type { JsonObject } from '../models/record.js';
import { checkTimeoutMs } from '../models/timeout.js';
import type { ContainedProcess } from '../sandbox/contained-process.js';
import {
  type AttemptDirectories,
  type Launched,
  launchInAttempt,
  type SandboxSettings,
} from '../sandbox/sandbox-settings.js';
import { fillPlaceholders, scriptArguments } from '../text/placeholders.js';
import { ContainedStdioTransport } from './contained-stdio-transport.js';
import type { Toolbox, ToolResult, ToolSpec } from './toolbox.js';
import type { TranscriptEvent } from './transcript.js';

/**
 * Tools served by an MCP server over stdio, started for one attempt with the workspace as its working
 * directory and `{workspace}` in its arguments replaced by the workspace path. The server and everything it
 * starts run contained like a command agent (SPEC §11): in a bubblewrap sandbox where only the workspace
 * and the attempt's home are writable, and `close()` returns only when every one of its processes is gone
 * (a background child of the server can no longer write after the session, and before the judgement).
 */

export interface McpServerOptions {
  command: string;
  /** Arguments; every `{workspace}` is replaced by the attempt's workspace path. */
  args?: readonly string[] | undefined;
  /** Extra environment variables (added to the sandbox's allowlisted environment). */
  env?: Readonly<Record<string, string>> | undefined;
  /**
   * How the server is contained; bubblewrap is required when absent (see `TargetContainment`, which
   * resolves it before {@link McpToolbox.start}).
   */
  sandbox?: SandboxSettings | undefined;
  /** Bound on starting the server and on each tool call. Default 30,000 ms. */
  timeoutMs?: number | undefined;
}

const MAX_STDERR_CHARS = 8_192;

export class McpToolbox implements Toolbox {
  readonly #client: Client;
  readonly #transport: ContainedStdioTransport | undefined;
  readonly #launched: Launched | undefined;
  readonly #timeoutMs: number;
  readonly #stderr: string[] = [];
  #tools: ToolSpec[] | undefined;

  private constructor(client: Client, launched: Launched | undefined, timeoutMs: number) {
    this.#client = client;
    this.#launched = launched;
    this.#transport = launched === undefined ? undefined : new ContainedStdioTransport(launched.process);
    this.#timeoutMs = timeoutMs;
    launched?.process.stderr.on('data', (chunk: Buffer) => {
      if (this.#stderr.join('').length < MAX_STDERR_CHARS) this.#stderr.push(chunk.toString('utf8'));
    });
  }

  /** Starts the server and completes the MCP handshake; a server that fails to start is a TargetError. */
  static async start(
    options: McpServerOptions & { sandbox: SandboxSettings },
    workspace: string,
    transcript: TranscriptEvent[],
    signal?: AbortSignal,
    attempt?: AttemptDirectories,
  ): Promise<McpToolbox> {
    const timeoutMs = checkTimeoutMs('server.timeoutMs', options.timeoutMs ?? 30_000);
    const args = (options.args ?? []).map((arg) => fillPlaceholders(arg, { workspace }));
    const settings = options.sandbox;
    const client = new Client({ name: 'witness', version: '0.1.0' });
    let launched: Launched | undefined;
    let startError: unknown;
    try {
      launched = launchInAttempt(settings, {
        command: options.command,
        args,
        workspace,
        attempt,
        env: options.env,
        programFiles: mcpProgramFiles(options),
      });
    } catch (error) {
      startError = error;
    }
    const toolbox = new McpToolbox(client, launched, timeoutMs);
    transcript.push({ kind: 'note', text: `started MCP server: ${[options.command, ...args].join(' ')}` });
    try {
      if (toolbox.#transport === undefined) throw startError;
      await client.connect(toolbox.#transport, { timeout: timeoutMs, signal });
    } catch (error) {
      await toolbox.close();
      if (signal?.aborted) throw signal.reason;
      const stderr = toolbox.stderr();
      const withheld = launched?.campaignDirectoryWithheld;
      throw new TargetError(
        `the MCP server did not start: ${(error as Error).message}${stderr === '' ? '' : `; stderr: ${stderr.slice(0, 500)}`}${withheld === undefined ? '' : `; note: ${withheld}`}`,
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

  /** Ends the session and the server's sandbox: when this resolves, every process of the server is gone. */
  async close(): Promise<void> {
    await this.#client.close().catch(() => undefined);
    await this.#transport?.close().catch(() => undefined);
    this.#launched?.release();
  }

  /** The contained server process (for tests and diagnostics). */
  get process(): ContainedProcess | undefined {
    return this.#launched?.process;
  }
}

/**
 * The scripts a server's configuration names (an absolute argument with no placeholder such as `{workspace}`, such as the
 * reference server's `dist/index.js`): the package each lives in is shown to the server (SPEC §13).
 */
export function mcpProgramFiles(options: Pick<McpServerOptions, 'args'>): string[] {
  return scriptArguments(options.args);
}
