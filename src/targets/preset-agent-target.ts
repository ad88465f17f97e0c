import { closeSync, constants, mkdtempSync, openSync, realpathSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { InvalidOptionError, TargetError } from '../errors.js';
import type { ComponentIdentifier } from '../models/identifier.js';
import type { Containment } from '../models/vocabulary.js';
import { openAttemptNetwork } from '../network/attempt-network.js';
import {
  type AttemptDirectories,
  refuseUnreachableProgram,
  type SandboxSettings,
} from '../sandbox/sandbox-settings.js';
import { removeTree } from '../sources/confined-fs.js';
import { SecretRedactor } from '../text/secret-redactor.js';
import { CommandTarget } from './command-target.js';
import type { AgentPreset, AgentPresetName } from './presets/agent-preset.js';
import { AGENT_PRESET_MODULES } from './presets/preset-registry.js';
import { toolCallsFromExchanges } from './recorded-tool-calls.js';
import { type RecordingProxy, startRecordingProxy } from './recording-proxy.js';
import type { AttemptPreparation, PreparedAttempt, Target, TargetRequest, TargetResponse } from './target.js';
import { TargetContainment } from './target-containment.js';
import type { TranscriptEvent } from './transcript.js';

/**
 * A popular coding-agent CLI as the target, by preset (qwen-code, codex, claude-code, gemini-cli,
 * opencode). The preset produces the invocation; a {@link CommandTarget} runs it, so the CLI is contained
 * like any command agent (SPEC §11: bubblewrap, the campaign's `network:`, the allowlisted environment,
 * every process gone before the attempt is judged). Its configuration files are written into the
 * attempt's own home — the sandbox's fresh `HOME` — so the agent reads no settings, credentials or
 * history of the person running Witness, and leaves none behind. The CLI's structured output becomes the
 * reply (the claim) and the tool-call events.
 *
 * With `model.record`, a recording proxy on the host's loopback sits between the agent and the model for
 * the attempt, and every exchange is stored in the transcript (redacted, bounded) — a transcript even for
 * an agent whose output says nothing. Under `network: proxy` (the default) the model endpoint — the
 * recording proxy's, or the model's own when it is plain HTTP — is relayed to a port on the sandbox's own
 * loopback and the CLI's `baseUrl` rewritten to it; `network: none` leaves it no network at all.
 *
 * Redaction is the campaign's: one {@link SecretRedactor} (its `secrets:` plus this model's `apiKeyEnv`)
 * runs over the proxy's records, the reply and the transcript, whatever the agent printed. Used outside a
 * campaign, the target makes the same redactor for the key it was given.
 */
export interface PresetAgentTargetOptions {
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
    /** Where the key came from; names it in `[redacted:NAME]` and makes it a secret. */
    apiKeyEnv?: string | undefined;
    record?: boolean | undefined;
  };
  baseEnv?: Readonly<Record<string, string | undefined>> | undefined;
  timeoutMs?: number | undefined;
  maxOutputBytes?: number | undefined;
  /**
   * How the CLI is contained, resolved for the run. When absent, bubblewrap is required (detected at the
   * first `send`), as for any command target.
   */
  sandbox?: SandboxSettings | undefined;
  /**
   * The campaign's secret redactor. When absent, one is made for `model.apiKey` when `apiKeyEnv` names
   * it (a key the campaign did not name, such as the placeholder for the scripted model, is no secret).
   */
  redactor?: SecretRedactor | undefined;
}

export class PresetAgentTarget implements Target {
  readonly #options: PresetAgentTargetOptions;
  readonly #redactor: SecretRedactor;
  readonly #containment: TargetContainment;

  constructor(options: PresetAgentTargetOptions) {
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
    const { apiKey, apiKeyEnv } = options.model;
    this.#redactor =
      options.redactor ??
      new SecretRedactor(apiKeyEnv === undefined ? [] : [{ name: apiKeyEnv, value: apiKey }]);
    this.#containment = new TargetContainment(
      options.sandbox,
      options.baseEnv,
      `the ${options.preset} agent`,
    );
    // A CLI the agent's own user could not run is refused before the run, naming the path.
    if (options.sandbox !== undefined) {
      const command = options.command ?? AGENT_PRESET_MODULES[options.preset].defaultCommand;
      refuseUnreachableProgram(options.sandbox, { command });
    }
  }

  containment(): Containment {
    return this.#containment.mode();
  }

  /**
   * Readies the attempt before its baseline (SPEC §13): starts the recording proxy, writes the preset's
   * configuration into the attempt's home, and lets the command target hand the attempt over to the
   * agent. The CLI's own state paths (caches, sessions, logs) are named for the change set.
   */
  async prepareAttempt(request: AttemptPreparation): Promise<PreparedAttempt> {
    request.signal?.throwIfAborted();
    const preset = AGENT_PRESET_MODULES[this.#options.preset];
    const { model } = this.#options;
    const redactor = this.#redactor;
    const sandbox = await this.#containment.settings();
    const { attempt } = request;
    const home = attempt.home.path;
    let proxy: RecordingProxy | undefined;
    try {
      if (model.record === true) proxy = await startRecordingProxy({ upstream: model.baseUrl, redactor });
      const endpoint = proxy?.baseUrl ?? model.baseUrl;
      const invocation = preset.buildInvocation({
        model: {
          baseUrl: attempt.egress?.relayEndpoint(endpoint) ?? endpoint,
          apiKey: model.apiKey,
          name: model.name,
        },
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
        sandbox,
        timeoutMs: this.#options.timeoutMs,
        maxOutputBytes: this.#options.maxOutputBytes,
      });
      const inner = await runner.prepareAttempt(request);
      const opened = proxy;
      return {
        agentState: [...preset.agentState],
        shownPaths: inner.shownPaths,
        send: (sent) => this.#run(preset, inner, opened, sent),
        close: async () => {
          await inner.close();
          await opened?.close();
        },
      };
    } catch (error) {
      await proxy?.close();
      throw error;
    }
  }

  async send(request: TargetRequest): Promise<TargetResponse> {
    request.signal?.throwIfAborted();
    const sandbox = await this.#containment.settings();
    // The attempt's held directories (a campaign run); a target used on its own makes its own, as
    // `launchInAttempt` would, so the preset's files still go into the home the agent will get.
    const own = request.attempt === undefined ? ownDirectories(request.workspace) : undefined;
    let attempt = (request.attempt ?? own?.attempt) as AttemptDirectories;
    // Under network: proxy the model endpoint is relayed into the sandbox: the attempt's egress, or (a
    // target used outside a campaign) one of its own.
    const ownNetwork =
      attempt.egress === undefined && sandbox.containment.mode === 'bwrap' && sandbox.network === 'proxy'
        ? openAttemptNetwork({ settings: { mode: 'proxy', allow: [], intercept: false } })
        : undefined;
    if (ownNetwork !== undefined) attempt = { ...attempt, egress: ownNetwork.egress };
    try {
      const prepared = await this.prepareAttempt({
        workspace: request.workspace,
        attempt,
        signal: request.signal,
      });
      try {
        return await prepared.send({ ...request, attempt });
      } finally {
        await prepared.close();
      }
    } finally {
      await ownNetwork?.close();
      own?.release();
    }
  }

  /** Runs the prepared CLI and reads its output into the reply and the tool-call events. */
  async #run(
    preset: AgentPreset,
    runner: PreparedAttempt,
    proxy: RecordingProxy | undefined,
    request: TargetRequest,
  ): Promise<TargetResponse> {
    const redactor = this.#redactor;
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
    const transcript = redactor.redactValue<TranscriptEvent[]>([
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
    ]);
    if (failure !== undefined) {
      if (failure instanceof TargetError) {
        const missing = failure.message.startsWith('the command could not be started');
        const message = missing
          ? `${failure.message}; install the agent (npm install -g ${preset.npmPackage}) or set the target's command: to its path`
          : failure.message;
        throw new TargetError(redactor.redactText(message), transcript, { cause: failure });
      }
      throw failure;
    }
    return { reply: redactor.redactText(reply), transcript };
  }

  identifier(): ComponentIdentifier {
    const { model } = this.#options;
    return {
      type: 'PresetAgentTarget',
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

/**
 * A workspace handle and a fresh private home for a target used outside a campaign (what the attempt
 * pipeline otherwise holds); `release` closes the handles and removes the home.
 */
function ownDirectories(workspace: string): { attempt: AttemptDirectories; release(): void } {
  const workspaceFd = openSync(workspace, constants.O_RDONLY | constants.O_DIRECTORY);
  let home: string;
  let homeFd: number;
  try {
    home = realpathSync(mkdtempSync(join(tmpdir(), 'witness-agent-home-')));
    homeFd = openSync(home, constants.O_RDONLY | constants.O_DIRECTORY);
  } catch (error) {
    closeSync(workspaceFd);
    throw error;
  }
  const held = { path: home, fd: homeFd };
  return {
    attempt: {
      workspace: { path: realpathSync(workspace), fd: workspaceFd },
      home: held,
      tmp: held,
      runPath: home,
    },
    release() {
      closeSync(workspaceFd);
      closeSync(homeFd);
      removeTree(home);
    },
  };
}
