import type { ComponentIdentifier } from '../models/identifier.js';
import type { JsonObject, JsonValue } from '../models/record.js';
import type { Containment } from '../models/vocabulary.js';
import type { AttemptEgress } from '../network/attempt-network.js';
import type { AttemptDirectories } from '../sandbox/sandbox-settings.js';
import { callHttpRequestTool, HTTP_REQUEST_TOOL } from './http-request-tool.js';
import type { AttemptPreparation } from './target.js';
import type { TranscriptEvent } from './transcript.js';
import { WorkspaceFiles, type WorkspaceFilesOptions } from './workspace-files.js';

/**
 * The tools an agent loop can call: described for a model (name, description, JSON Schema of the
 * arguments) and callable by name. Two implementations: {@link WorkspaceToolbox} (Witness's own confined
 * file tools) and the MCP toolbox (tools served by an MCP server). A failed call is a result the agent
 * sees (`ok: false`), never an exception; only cancellation rejects.
 */
export interface Toolbox {
  list(): Promise<ToolSpec[]>;
  call(name: string, args: unknown, signal?: AbortSignal): Promise<ToolResult>;
  close(): Promise<void>;
}

export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  inputSchema: JsonObject;
}

export interface ToolResult {
  ok: boolean;
  text: string;
}

/**
 * The toolbox axis of an agent target: where an attempt's tools come from (Witness's own workspace tools,
 * or an MCP server started for the attempt). Opened once per attempt on that attempt's workspace.
 */
export interface ToolboxProvider {
  /** Opens the tools on `workspace`; what happens on the way (a server started) is appended to `transcript`. */
  open(
    workspace: string,
    transcript: TranscriptEvent[],
    signal?: AbortSignal,
    attempt?: AttemptDirectories,
  ): Promise<OpenedToolbox>;
  /** Which tools, by kind and non-secret configuration. */
  identifier(): ComponentIdentifier;
  /** How a toolbox that starts processes contains them (SPEC §11); absent for in-process tools. */
  containment?(): Containment;
  /**
   * Readies the attempt for the toolbox's processes before the attempt's baseline (SPEC §13); absent for
   * in-process tools. Returns the host paths its processes will be shown.
   */
  prepareAttempt?(request: AttemptPreparation): Promise<{ shownPaths: readonly string[] }>;
}

/** One attempt's open tools, and what a planner needs to know to use them. */
export interface OpenedToolbox {
  toolbox: Toolbox;
  /** How the mock planner's read and write map onto these tools. */
  fileMapping(): Promise<FileToolMapping>;
  /** Appended to a chat planner's default system prompt (e.g. the workspace path the tools expect). */
  promptHint: string;
  /** Closes the tools; returns notes for the transcript (a server's stderr). */
  close(): Promise<TranscriptEvent[]>;
}

/**
 * How a planner's file actions map onto a toolbox's tools (Witness's own, or an MCP server's). A write
 * may take several calls (an MCP server may need its parent directory created first). `post` is there
 * when the toolbox can send an HTTP request (Witness's own `http_request`).
 */
export interface FileToolMapping {
  read(path: string): ToolInvocation;
  write(path: string, content: string): ToolInvocation[];
  post?(url: string, body: string): ToolInvocation;
}

export interface ToolInvocation {
  name: string;
  args: JsonValue;
}

export const WORKSPACE_TOOL_MAPPING: FileToolMapping = {
  read: (path) => ({ name: 'read_file', args: { path } }),
  write: (path, content) => [{ name: 'write_file', args: { path, content } }],
  post: (url, body) => ({ name: HTTP_REQUEST_TOOL.name, args: { method: 'POST', url, body } }),
};

const WORKSPACE_TOOLS: ToolSpec[] = [
  {
    name: 'read_file',
    description: 'Read a UTF-8 text file in the workspace. Paths are relative to the workspace root.',
    inputSchema: {
      type: 'object',
      properties: { path: { type: 'string', description: 'file path relative to the workspace' } },
      required: ['path'],
      additionalProperties: false,
    },
  },
  {
    name: 'write_file',
    description: 'Create or overwrite a file in the workspace with the given text.',
    inputSchema: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'file path relative to the workspace' },
        content: { type: 'string', description: 'the complete new content' },
      },
      required: ['path', 'content'],
      additionalProperties: false,
    },
  },
  {
    name: 'list_dir',
    description: 'List a directory in the workspace (directories end with "/", links with "@").',
    inputSchema: {
      type: 'object',
      properties: { path: { type: 'string', description: 'directory path; "." is the workspace root' } },
      required: ['path'],
      additionalProperties: false,
    },
  },
  HTTP_REQUEST_TOOL,
];

export interface WorkspaceToolboxOptions extends WorkspaceFilesOptions {
  /** The attempt's egress proxy `http_request` sends through; without it the tool sends nothing. */
  egress?: AttemptEgress | undefined;
}

/**
 * `read_file`, `write_file` and `list_dir`, confined to one workspace (see {@link WorkspaceFiles}), and
 * `http_request`, sent only through the attempt's egress proxy (see http-request-tool.ts).
 */
export class WorkspaceToolbox implements Toolbox {
  readonly #files: WorkspaceFiles;
  readonly #egress: AttemptEgress | undefined;

  constructor(workspace: string, options: WorkspaceToolboxOptions = {}) {
    const { egress, ...files } = options;
    this.#files = new WorkspaceFiles(workspace, files);
    this.#egress = egress;
  }

  async list(): Promise<ToolSpec[]> {
    return structuredClone(WORKSPACE_TOOLS);
  }

  async call(name: string, args: unknown, signal?: AbortSignal): Promise<ToolResult> {
    signal?.throwIfAborted();
    const input = (typeof args === 'object' && args !== null ? args : {}) as Record<string, unknown>;
    switch (name) {
      case 'read_file':
        return this.#files.readFile(input.path as string);
      case 'write_file':
        if (typeof input.content !== 'string')
          return { ok: false, text: 'write_file needs a string content' };
        return this.#files.writeFile(input.path as string, input.content);
      case 'list_dir':
        return this.#files.listDir(typeof input.path === 'string' ? input.path : '.');
      case HTTP_REQUEST_TOOL.name:
        return callHttpRequestTool(input, { egress: this.#egress }, signal);
      default:
        return { ok: false, text: `unknown tool ${JSON.stringify(name)}` };
    }
  }

  async close(): Promise<void> {}
}

/** Witness's own confined file tools and web tool, opened on each attempt's workspace and network. */
export class WorkspaceToolboxProvider implements ToolboxProvider {
  async open(
    workspace: string,
    _transcript?: TranscriptEvent[],
    _signal?: AbortSignal,
    attempt?: AttemptDirectories,
  ): Promise<OpenedToolbox> {
    const toolbox = new WorkspaceToolbox(workspace, { egress: attempt?.egress });
    return {
      toolbox,
      fileMapping: async () => WORKSPACE_TOOL_MAPPING,
      promptHint: '',
      close: async () => {
        await toolbox.close();
        return [];
      },
    };
  }

  identifier(): ComponentIdentifier {
    return { type: 'WorkspaceToolbox', version: '2', params: {} };
  }
}
