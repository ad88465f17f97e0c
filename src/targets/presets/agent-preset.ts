import type { TranscriptEvent } from '../transcript.js';

/**
 * A preset knows one coding-agent CLI: how to run it non-interactively against a given model endpoint,
 * and how to read its structured output. It is pure — it *produces* a command invocation (program,
 * arguments, stdin, environment, files for the attempt's home) that the command target runs, so whatever
 * confinement applies to command targets (the attempt sandbox) applies to presets unchanged.
 *
 * Arguments and stdin are templates: `{prompt}` and `{workspace}` are substituted once by the command
 * target, so a preset never pastes the prompt into a template itself (a prompt that mentions
 * `{workspace}` stays as written).
 */

export const AGENT_PRESETS = ['qwen-code', 'codex', 'claude-code', 'gemini-cli', 'opencode'] as const;
export type AgentPresetName = (typeof AGENT_PRESETS)[number];

/** The wire protocol an agent CLI speaks to its model (what a recording proxy and the scripted model see). */
export const AGENT_APIS = ['openai-chat', 'openai-responses', 'anthropic-messages', 'gemini'] as const;
export type AgentApi = (typeof AGENT_APIS)[number];

export interface AgentModel {
  /** The endpoint the agent must call (already pointed at the recording proxy when recording). */
  baseUrl: string;
  /** The name of the environment variable the preset puts the key in is the preset's business. */
  apiKey: string;
  name: string;
}

export interface PresetInput {
  model: AgentModel;
  /** The attempt's own home directory (absolute); `homeFiles` paths are relative to it. */
  home: string;
  /** Overrides the preset's program (a binary elsewhere). */
  command?: string | undefined;
  /** Extra flags, appended after the preset's own. */
  extraArgs?: readonly string[] | undefined;
}

export interface AgentInvocation {
  command: string;
  /** Templates: `{prompt}` and `{workspace}` are substituted once when the command runs. */
  args: string[];
  /** A template for stdin; the prompt goes here wherever the CLI reads it from stdin. */
  stdin: string | undefined;
  env: Record<string, string>;
  /** Configuration files the CLI reads from its home, written before it starts. */
  homeFiles: Array<{ path: string; content: string }>;
}

export interface ParsedAgentOutput {
  /** The agent's final answer: its claim. */
  reply: string;
  /** Tool calls and results, in order, as the CLI reported them. */
  events: TranscriptEvent[];
}

export interface AgentPreset {
  name: AgentPresetName;
  api: AgentApi;
  /** The program run when the campaign gives no `command:`. */
  defaultCommand: string;
  /** The npm package that provides it (documentation and error messages). */
  npmPackage: string;
  /**
   * Glob locators, relative to the attempt's home, of what the CLI writes there on every run whatever it
   * is asked (caches, sessions, logs, ids), each covering what lies beneath it: its changes there are
   * listed apart as agent state (SPEC §13).
   * Never the configuration the preset writes, nor files the CLI reads as instructions (a memory such as
   * `QWEN.md`): an agent that rewrites those has changed its own behaviour, and that must be counted.
   */
  agentState: readonly string[];
  buildInvocation(input: PresetInput): AgentInvocation;
  /** Reads the CLI's stdout; undefined when it holds nothing this preset recognizes. */
  parseOutput(stdout: string): ParsedAgentOutput | undefined;
}

/** Environment common to every preset: no colour codes in output, no interactive pager, no update checks. */
export function commonEnv(home: string): Record<string, string> {
  return {
    HOME: home,
    XDG_CONFIG_HOME: `${home}/.config`,
    XDG_DATA_HOME: `${home}/.local/share`,
    XDG_STATE_HOME: `${home}/.local/state`,
    XDG_CACHE_HOME: `${home}/.cache`,
    NO_COLOR: '1',
    CI: '1',
    NO_UPDATE_NOTIFIER: '1',
  };
}

/** Splits a JSON-lines text into the objects it holds; lines that are not JSON objects are skipped. */
export function jsonLines(text: string): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (!trimmed.startsWith('{')) continue;
    try {
      const value: unknown = JSON.parse(trimmed);
      if (isRecord(value)) out.push(value);
    } catch {
      // A partial last line (the agent was stopped mid-write) or log noise: not an event.
    }
  }
  return out;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A tool result's content as text (a string, or an array of text blocks). */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .flatMap((block) => (isRecord(block) && typeof block.text === 'string' ? [block.text] : []))
      .join('\n');
  }
  return content === undefined || content === null ? '' : JSON.stringify(content);
}
