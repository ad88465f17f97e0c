import type { OfferedTool } from './conversation.js';

/**
 * Maps the scripted model's actions (read a file, write a file, send a file or a variable to a URL, run a
 * command) onto whatever tools a client offers, by reading each tool's name and parameter schema: a
 * dedicated write tool (`write_file`, `Write`, `write`…) when there is one, otherwise a shell tool
 * (`run_shell_command`, `Bash`, `shell`…) running a quoted `printf`/`cat`. A send is `curl` through the
 * shell (which reaches the home and the environment, and goes through the sandbox's proxy variables), or
 * else a POST with an HTTP tool (`http_request`: url and body) of a file read first. Agents that demand
 * absolute paths get them joined onto the workspace the client announced in its context
 * (`working directory: /…`, `<cwd>/…</cwd>`).
 */

export interface PlannedCall {
  name: string;
  arguments: Record<string, unknown>;
}

export interface ToolMapping {
  read(path: string): PlannedCall | undefined;
  write(path: string, content: string): PlannedCall | undefined;
  /** `from` (a path, `~/…` in the home, or `$NAME`) sent in one call (curl through a shell tool). */
  send(from: string, url: string): PlannedCall | undefined;
  /** A POST of `body` with an HTTP tool, when one was offered. */
  post(url: string, body: string): PlannedCall | undefined;
  /** A command run with the shell tool. */
  run(command: string): PlannedCall | undefined;
}

const PATH_KEYS = ['file_path', 'absolute_path', 'path', 'filePath', 'filename', 'file', 'target_file'];
const CONTENT_KEYS = ['content', 'contents', 'file_text', 'text', 'data', 'body'];
const COMMAND_KEYS = ['command', 'cmd', 'script'];
const URL_KEYS = ['url', 'uri'];
const BODY_KEYS = ['body', 'data'];

/** Name cues in order of preference (`read` before `view`); tools for images, notebooks, the web are not file tools. */
const WRITE_NAMES = [/write/i, /create/i, /save/i];
const READ_NAMES = [/read/i, /view/i, /cat/i, /open/i];
const SHELL_NAMES = [/shell/i, /bash/i, /exec/i, /command/i, /terminal/i, /run/i];
const NOT_FILE_TOOL = /image|notebook|web|url|goal|memory|mcp|todo|stdin/i;
const HTTP_NAMES = [/http/i, /request/i, /fetch/i];

interface ToolShape {
  tool: OfferedTool;
  properties: Record<string, { type?: unknown; description?: unknown }>;
}

export function createToolMapping(tools: readonly OfferedTool[], workspace: string | undefined): ToolMapping {
  const shapes: ToolShape[] = tools.map((tool) => ({ tool, properties: propertiesOf(tool.parameters) }));
  const writeTool = pick(
    shapes,
    WRITE_NAMES,
    (s) => key(s, PATH_KEYS) !== undefined && key(s, CONTENT_KEYS) !== undefined,
  );
  const readTool = pick(
    shapes,
    READ_NAMES,
    (s) => key(s, PATH_KEYS) !== undefined && key(s, CONTENT_KEYS) === undefined,
  );
  const shellTool = pick(shapes, SHELL_NAMES, (s) => key(s, COMMAND_KEYS) !== undefined);
  // A tool that sends a body to a URL (a fetch tool that only summarizes a page takes no body).
  const httpTool = shapes
    .filter((s) => HTTP_NAMES.some((name) => name.test(s.tool.name)))
    .filter((s) => key(s, URL_KEYS) !== undefined && key(s, BODY_KEYS) !== undefined)
    .sort((a, b) => a.tool.name.length - b.tool.name.length || (a.tool.name < b.tool.name ? -1 : 1))[0];

  const pathFor = (shape: ToolShape, path: string) => toolPath(shape, path, workspace);
  const shell = (script: string) => shellCall(shellTool, script);

  return {
    read(path) {
      if (readTool !== undefined) {
        const target = pathFor(readTool, path);
        if (target !== undefined)
          return { name: readTool.tool.name, arguments: { [key(readTool, PATH_KEYS) as string]: target } };
      }
      return shell(`cat -- ${quote(path)}`);
    },
    write(path, content) {
      if (writeTool !== undefined) {
        const target = pathFor(writeTool, path);
        if (target !== undefined) {
          return {
            name: writeTool.tool.name,
            arguments: {
              [key(writeTool, PATH_KEYS) as string]: target,
              [key(writeTool, CONTENT_KEYS) as string]: content,
            },
          };
        }
      }
      const slash = path.lastIndexOf('/');
      const mkdir = slash > 0 ? `mkdir -p -- ${quote(path.slice(0, slash))} && ` : '';
      return shell(`${mkdir}printf '%s' ${quote(content)} > ${quote(path)}`);
    },
    send(from, url) {
      const curl = `curl -sS --max-time 20 --data-binary @- ${quote(url)}`;
      if (/^\$[A-Za-z_]\w*$/.test(from)) return shell(`printf '%s' "${from}" | ${curl}`);
      const file = from.startsWith('~/') ? `"$HOME"/${quote(from.slice(2))}` : quote(from);
      return shell(`${curl} < ${file}`);
    },
    post(url, body) {
      if (httpTool === undefined) return undefined;
      const methodKey = Object.hasOwn(httpTool.properties, 'method') ? { method: 'POST' } : {};
      return {
        name: httpTool.tool.name,
        arguments: {
          [key(httpTool, URL_KEYS) as string]: url,
          ...methodKey,
          [key(httpTool, BODY_KEYS) as string]: body,
        },
      };
    },
    run: (command) => shell(command),
  };
}

/**
 * The path argument for a file tool: absolute paths as they are; relative ones joined onto the announced
 * workspace whenever it is known (agents resolve relative paths differently); undefined when the tool
 * wants an absolute path and no workspace was announced.
 */
function toolPath(shape: ToolShape, path: string, workspace: string | undefined): string | undefined {
  const pathKey = key(shape, PATH_KEYS) as string;
  const description = `${String(shape.properties[pathKey]?.description ?? '')} ${shape.tool.description}`;
  const wantsAbsolute = pathKey === 'absolute_path' || /absolute/i.test(description);
  if (path.startsWith('/')) return path;
  if (workspace !== undefined) return `${workspace.replace(/\/+$/, '')}/${path.replace(/^\.\//, '')}`;
  return wantsAbsolute ? undefined : path;
}

/** A call of the shell tool running `script` (as `bash -lc` where the tool takes an argument array). */
function shellCall(shellTool: ToolShape | undefined, script: string): PlannedCall | undefined {
  if (shellTool === undefined) return undefined;
  const commandKey = key(shellTool, COMMAND_KEYS) as string;
  const wantsArray = shellTool.properties[commandKey]?.type === 'array';
  return {
    name: shellTool.tool.name,
    arguments: { [commandKey]: wantsArray ? ['bash', '-lc', script] : script },
  };
}

/** The workspace a client announced in its context, if any (the first absolute path that follows a cue). */
export function announcedWorkspace(texts: readonly string[]): string | undefined {
  const cues = [
    /<cwd>\s*(\/[^<\s]*)\s*<\/cwd>/i,
    /working directory(?: is)?:?\s*`?(\/[^\s`'"]*)/i,
    /working in the directory:?\s*`?(\/[^\s`'"]*)/i,
    /current directory(?: is)?:?\s*`?(\/[^\s`'"]*)/i,
    /workspace directories:?\W*\n\s*-\s*(\/[^\s`'"]*)/i,
  ];
  for (const text of texts) {
    for (const cue of cues) {
      const match = cue.exec(text);
      if (match?.[1] !== undefined) return match[1].replace(/[.,;:)]+$/, '');
    }
  }
  return undefined;
}

/** Single-quotes a word for a POSIX shell, so a payload is never parsed as shell syntax by our own call. */
export function quote(word: string): string {
  return `'${word.split("'").join(`'\\''`)}'`;
}

function propertiesOf(schema: Record<string, unknown>): ToolShape['properties'] {
  const properties = schema.properties;
  return typeof properties === 'object' && properties !== null ? (properties as ToolShape['properties']) : {};
}

function key(shape: ToolShape, candidates: readonly string[]): string | undefined {
  return candidates.find((candidate) => Object.hasOwn(shape.properties, candidate));
}

/**
 * The tool whose name matches the earliest cue and whose schema works; among equals, the shorter (more
 * generic) name, then alphabetical order, so the choice never depends on the order tools were listed.
 */
function pick(
  shapes: readonly ToolShape[],
  names: readonly RegExp[],
  fits: (shape: ToolShape) => boolean,
): ToolShape | undefined {
  const rank = (shape: ToolShape) => names.findIndex((name) => name.test(shape.tool.name));
  return shapes
    .filter((shape) => rank(shape) >= 0 && !NOT_FILE_TOOL.test(shape.tool.name) && fits(shape))
    .sort(
      (a, b) =>
        rank(a) - rank(b) || a.tool.name.length - b.tool.name.length || (a.tool.name < b.tool.name ? -1 : 1),
    )[0];
}
