import { posix } from 'node:path';
import type { ComponentIdentifier } from '../models/identifier.js';
import { checkTimeoutMs } from '../models/timeout.js';
import type { Containment } from '../models/vocabulary.js';
import {
  type AttemptDirectories,
  attemptHostView,
  handOverToAgent,
  refuseUnreachableProgram,
} from '../sandbox/sandbox-settings.js';
import { type McpServerOptions, McpToolbox, mcpProgramFiles } from './mcp-toolbox.js';
import type { AttemptPreparation } from './target.js';
import { TargetContainment } from './target-containment.js';
import { nonEmptyString, TARGET_DEFAULTS } from './target-defaults.js';
import type { FileToolMapping, OpenedToolbox, ToolboxProvider, ToolSpec } from './toolbox.js';
import type { TranscriptEvent } from './transcript.js';

/**
 * Tools served by an MCP server, one server process per attempt on that attempt's workspace (see
 * {@link McpToolbox}). The mock planner uses `read_text_file` (or `read_file`) and `write_file` with
 * absolute paths under the workspace, creating the parent with `create_directory` first when the server
 * offers it; a chat planner is given every tool the server lists and told the workspace path.
 */
export class McpToolboxProvider implements ToolboxProvider {
  readonly #server: McpServerOptions;
  readonly #containment: TargetContainment;

  constructor(server: McpServerOptions) {
    nonEmptyString('server.command', server?.command);
    this.#server = {
      ...server,
      timeoutMs: checkTimeoutMs('server.timeoutMs', server.timeoutMs ?? TARGET_DEFAULTS.mcpTimeoutMs),
    };
    this.#containment = new TargetContainment(server.sandbox, {}, 'an MCP server');
    // A server the agent's own user could not run is refused before the run, naming the path.
    if (server.sandbox !== undefined) refuseUnreachableProgram(server.sandbox, this.#launchView());
  }

  /** What the sandbox needs to know of the server to decide its view of the host. */
  #launchView() {
    const server = this.#server;
    return { command: server.command, programFiles: mcpProgramFiles(server), env: server.env };
  }

  async open(
    workspace: string,
    transcript: TranscriptEvent[],
    signal?: AbortSignal,
    attempt?: AttemptDirectories,
  ): Promise<OpenedToolbox> {
    const sandbox = await this.#containment.settings();
    const toolbox = await McpToolbox.start(
      { ...this.#server, sandbox },
      workspace,
      transcript,
      signal,
      attempt,
    );
    return {
      toolbox,
      fileMapping: async () => mcpFileMapping(await toolbox.list(), workspace),
      promptHint: ` The workspace is ${workspace}.`,
      close: async () => {
        const stderr = toolbox.stderr();
        await toolbox.close();
        return stderr === '' ? [] : [{ kind: 'note', text: `MCP server stderr: ${stderr}` }];
      },
    };
  }

  /** The host paths the server will be shown (SPEC §13), decided before the attempt's baseline. */
  async prepareAttempt(request: AttemptPreparation): Promise<{ shownPaths: readonly string[] }> {
    const settings = await this.#containment.settings();
    const launch = { ...this.#launchView(), runPath: request.attempt.runPath };
    refuseUnreachableProgram(settings, launch);
    // The attempt becomes the server's own user's (Witness runs as root) before its baseline.
    handOverToAgent(settings, request.attempt);
    return { shownPaths: attemptHostView(settings, launch).shown };
  }

  /** The server is a process: contained by bubblewrap unless the campaign said `sandbox: none`. */
  containment(): Containment {
    return this.#containment.mode();
  }

  identifier(): ComponentIdentifier {
    const server = this.#server;
    return {
      type: 'McpStdioServer',
      version: '1',
      params: {
        command: server.command,
        args: [...(server.args ?? [])],
        envNames: Object.keys(server.env ?? {}).sort(),
      },
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
