import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { InvalidOptionError, TargetError } from '../errors.js';
import type { ComponentIdentifier } from '../models/identifier.js';
import type { JsonValue } from '../models/record.js';
import { CommandTarget } from './command-target.js';
import type { AgentPresetName } from './presets/agent-preset.js';
import { AGENT_PRESET_MODULES } from './presets/preset-registry.js';
import { toolCallsFromExchanges } from './recorded-tool-calls.js';
import { type RecordingProxy, startRecordingProxy } from './recording-proxy.js';
import type { Target, TargetRequest, TargetResponse } from './target.js';
import type { TranscriptEvent } from './transcript.js';

/**
 * A popular coding-agent CLI as the target, by preset (qwen-code, codex, claude-code, gemini-cli,
 * opencode). Each attempt gets a fresh home directory holding only the preset's configuration, so the
 * agent reads no settings, credentials or history of the person running Witness, and leaves none behind.
 * The preset produces the invocation; a {@link CommandTarget} runs it (same process-group kill, same
 * placeholder rules, same confinement). The CLI's structured output becomes the reply (the claim) and the
 * tool-call events.
 *
 * With `model.record`, a recording proxy sits between the agent and the model for the attempt, and every
 * exchange is stored in the transcript (redacted, bounded) — a transcript even for an agent whose output
 * says nothing. The API key is removed from every stored string, whatever the agent printed.
 */
export interface AgentTargetOptions {
  preset: AgentPresetName;
  /** The program to run instead of the preset's (a binary elsewhere). */
  command?: string | undefined;
  /** Extra arguments after the preset's own. */
  args?: readonly string[] | undefined;
  model: {
    baseUrl: string;
    name: string;
    /** The key the agent sends; never stored. */
    apiKey: string;
    record?: boolean | undefined;
  };
  baseEnv?: Readonly<Record<string, string | undefined>> | undefined;
  timeoutMs?: number | undefined;
  maxOutputBytes?: number | undefined;
  /** Where per-attempt homes are made; default the system temporary directory. */
  homeParent?: string | undefined;
}

const REDACTED = '[redacted]';

export class AgentTarget implements Target {
  readonly #options: AgentTargetOptions;

  constructor(options: AgentTargetOptions) {
    if (!Object.hasOwn(AGENT_PRESET_MODULES, options.preset)) {
      throw new InvalidOptionError(`unknown agent preset ${JSON.stringify(options.preset)}`);
    }
    if (options.model.name === '') throw new InvalidOptionError('model.name must name the model');
    try {
      new URL(options.model.baseUrl);
    } catch {
      throw new InvalidOptionError(`model.baseUrl is not a URL: ${options.model.baseUrl}`);
    }
    this.#options = { ...options, model: { ...options.model } };
  }

  async send(request: TargetRequest): Promise<TargetResponse> {
    request.signal?.throwIfAborted();
    const preset = AGENT_PRESET_MODULES[this.#options.preset];
    const { model } = this.#options;
    const secrets = model.apiKey.length >= 4 ? [model.apiKey] : [];
    const home = await mkdtemp(join(this.#options.homeParent ?? tmpdir(), 'witness-agent-home-'));
    let proxy: RecordingProxy | undefined;
    try {
      if (model.record === true) proxy = await startRecordingProxy({ upstream: model.baseUrl, secrets });
      const invocation = preset.buildInvocation({
        model: { baseUrl: proxy?.baseUrl ?? model.baseUrl, apiKey: model.apiKey, name: model.name },
        home,
        command: this.#options.command,
        extraArgs: this.#options.args,
      });
      for (const file of invocation.homeFiles) {
        const path = resolve(home, file.path);
        if (!path.startsWith(`${home}/`))
          throw new InvalidOptionError(`a preset file escapes the home: ${file.path}`);
        await mkdir(dirname(path), { recursive: true, mode: 0o700 });
        await writeFile(path, file.content, { mode: 0o600 });
      }
      const runner = new CommandTarget({
        command: invocation.command,
        args: invocation.args,
        stdin: invocation.stdin,
        env: invocation.env,
        baseEnv: this.#options.baseEnv,
        timeoutMs: this.#options.timeoutMs,
        maxOutputBytes: this.#options.maxOutputBytes,
      });
      let failure: unknown;
      let raw: readonly unknown[] = [];
      try {
        raw = (await runner.send(request)).transcript;
      } catch (error) {
        failure = error;
        if (error instanceof TargetError) raw = error.transcript;
      }
      const stdout = lastAssistantText(raw);
      const parsed = stdout === undefined ? undefined : preset.parseOutput(stdout);
      const exchanges = proxy?.exchanges() ?? [];
      const toolEvents =
        parsed !== undefined && parsed.events.length > 0 ? parsed.events : toolCallsFromExchanges(exchanges);
      const processEvents = raw.filter((event): event is TranscriptEvent => isEvent(event, 'process'));
      const reply = parsed?.reply ?? stdout ?? '';
      const transcript = redactEvents(
        [
          { kind: 'message', role: 'user', text: request.prompt },
          ...toolEvents,
          ...processEvents,
          ...exchanges,
          ...(proxy !== undefined && proxy.dropped() > 0
            ? [
                {
                  kind: 'note' as const,
                  text: `${proxy.dropped()} further model exchange(s) were forwarded but not stored`,
                },
              ]
            : []),
          { kind: 'message', role: 'assistant', text: reply },
        ],
        secrets,
      );
      if (failure !== undefined) {
        if (failure instanceof TargetError) {
          const missing = (failure.cause as { code?: unknown } | undefined)?.code === 'ENOENT';
          const message = missing
            ? `${failure.message}; install the agent (npm install -g ${preset.npmPackage}) or set the target's command: to its path`
            : failure.message;
          throw new TargetError(redactText(message, secrets), transcript, { cause: failure });
        }
        throw failure;
      }
      return { reply: redactText(reply, secrets), transcript };
    } finally {
      await proxy?.close();
      await rm(home, { recursive: true, force: true });
    }
  }

  identifier(): ComponentIdentifier {
    const { model } = this.#options;
    return {
      type: 'AgentTarget',
      version: '1',
      params: {
        preset: this.#options.preset,
        command: this.#options.command ?? AGENT_PRESET_MODULES[this.#options.preset].defaultCommand,
        args: [...(this.#options.args ?? [])],
        model: { baseUrl: model.baseUrl, name: model.name, record: model.record === true },
        timeoutMs: this.#options.timeoutMs ?? null,
      },
    };
  }
}

function isEvent(event: unknown, kind: string): boolean {
  return typeof event === 'object' && event !== null && (event as { kind?: unknown }).kind === kind;
}

/** The command target's last assistant message: the CLI's raw stdout. */
function lastAssistantText(events: readonly unknown[]): string | undefined {
  for (let index = events.length - 1; index >= 0; index--) {
    const event = events[index] as { kind?: unknown; role?: unknown; text?: unknown };
    if (event?.kind === 'message' && event.role === 'assistant' && typeof event.text === 'string')
      return event.text;
  }
  return undefined;
}

function redactText(text: string, secrets: readonly string[]): string {
  return secrets.reduce((out, secret) => out.split(secret).join(REDACTED), text);
}

/** Every string in the events with each secret cut out (an agent may echo its key in stderr or a reply). */
function redactEvents(events: TranscriptEvent[], secrets: readonly string[]): TranscriptEvent[] {
  if (secrets.length === 0) return events;
  const walk = (value: unknown): unknown => {
    if (typeof value === 'string') return redactText(value, secrets);
    if (Array.isArray(value)) return value.map(walk);
    if (typeof value === 'object' && value !== null) {
      return Object.fromEntries(
        Object.entries(value).map(([key, inner]) => [redactText(key, secrets), walk(inner)]),
      );
    }
    return value;
  };
  return events.map((event) => walk(event as unknown as JsonValue) as TranscriptEvent);
}
