import { InvalidOptionError, TargetError } from '../errors.js';
import type { ComponentIdentifier } from '../models/identifier.js';
import { checkTimeoutMs } from '../models/timeout.js';
import type { Containment } from '../models/vocabulary.js';
import type { ContainedProcess } from '../sandbox/contained-process.js';
import {
  attemptHostView,
  handOverToAgent,
  type Launched,
  launchInAttempt,
  refuseUnreachableProgram,
  releaseAgent,
  type SandboxSettings,
} from '../sandbox/sandbox-settings.js';
import { fillPlaceholders, scriptArguments } from '../text/placeholders.js';
import type { AttemptPreparation, PreparedAttempt, Target, TargetRequest, TargetResponse } from './target.js';
import { TargetContainment } from './target-containment.js';
import { positiveInteger as positive, TARGET_DEFAULTS } from './target-defaults.js';
import type { TranscriptEvent } from './transcript.js';

/**
 * Any program as an agent (a coding agent's non-interactive mode, a script): run as a subprocess with the
 * workspace as its working directory, the prompt given by argument and/or on stdin, its stdout as the
 * reply. No shell is involved: `{prompt}` and `{workspace}` are substituted into argument strings, so a
 * prompt is never parsed as shell syntax.
 *
 * The program runs contained (SPEC §11, `src/sandbox/`): in a bubblewrap sandbox with its own PID
 * namespace, or — only when `sandbox: none` is explicit — in its own session with a process scan. When it
 * exits, times out or is cancelled, every process it started is gone before `send` returns, so nothing
 * writes to the workspace after it is judged; output is drained for at most `drainMs` and then closed (a
 * daemon holding stdout cannot hold up the run). Exiting non-zero, timing out or failing to start is a
 * {@link TargetError} (the attempt's outcome is `error`; the workspace is still judged).
 */
export interface CommandTargetOptions {
  command: string;
  /** Arguments; `{prompt}` and `{workspace}` are replaced. */
  args?: readonly string[] | undefined;
  /** Text written to stdin (with the same placeholders); stdin is closed empty when absent. */
  stdin?: string | undefined;
  /** Extra environment variables for the program (added to the sandbox's allowlisted environment). */
  env?: Readonly<Record<string, string>> | undefined;
  /**
   * Witness's environment, read only through the allowlist (PATH, LANG, LC_ALL, TERM, USER and the
   * sandbox's `passEnv`). Used when `sandbox` is absent.
   */
  baseEnv?: Readonly<Record<string, string | undefined>> | undefined;
  /**
   * How the program is contained. When absent, bubblewrap is required (detected at the first `send`;
   * a {@link SandboxUnavailableError} without it): running uncontained is never a silent default.
   */
  sandbox?: SandboxSettings | undefined;
  timeoutMs?: number | undefined;
  /** Bytes of stdout kept as the reply. Default 1,000,000. */
  maxOutputBytes?: number | undefined;
}

const STDERR_HEAD_BYTES = 8_192;
const STDERR_TAIL_BYTES = 8_192;

export class CommandTarget implements Target {
  readonly #options: CommandTargetOptions;
  readonly #timeoutMs: number;
  readonly #maxOutputBytes: number;
  readonly #containment: TargetContainment;

  constructor(options: CommandTargetOptions) {
    if (typeof options.command !== 'string' || options.command === '') {
      throw new InvalidOptionError('command must name the program to run');
    }
    this.#timeoutMs = checkTimeoutMs('timeoutMs', options.timeoutMs ?? TARGET_DEFAULTS.commandTimeoutMs);
    this.#maxOutputBytes = positive(
      'maxOutputBytes',
      options.maxOutputBytes ?? TARGET_DEFAULTS.maxOutputBytes,
    );
    this.#options = { ...options };
    this.#containment = new TargetContainment(options.sandbox, options.baseEnv, 'a command target');
    // A program the agent's own user could not run is refused before the run, naming the path.
    if (options.sandbox !== undefined) refuseUnreachableProgram(options.sandbox, this.#launchView());
  }

  containment(): Containment {
    return this.#containment.mode();
  }

  /**
   * Readies the attempt before its baseline (SPEC §13). The program is started by `send` of the
   * returned attempt, as by {@link CommandTarget.send}.
   */
  async prepareAttempt(request: AttemptPreparation): Promise<PreparedAttempt> {
    const settings = await this.#containment.settings();
    const launch = { ...this.#launchView(), runPath: request.attempt.runPath };
    refuseUnreachableProgram(settings, launch);
    // The attempt becomes the agent's own user's (Witness runs as root) before its baseline.
    handOverToAgent(settings, request.attempt);
    const view = attemptHostView(settings, launch);
    return {
      agentState: [],
      shownPaths: view.shown,
      send: (sent) => this.send(sent),
      close: async () => releaseAgent(request.attempt),
    };
  }

  /**
   * The scripts its arguments name (an absolute path with no placeholder, such as `{campaignDir}/agent.mjs`
   * once loaded): the package each lives in is shown to the agent. Never an argument the prompt fills in.
   */
  #programFiles(): string[] {
    return scriptArguments(this.#options.args);
  }

  /** What the sandbox needs to know of the program to decide the agent's view of the host. */
  #launchView() {
    return { command: this.#options.command, programFiles: this.#programFiles(), env: this.#options.env };
  }

  async send(request: TargetRequest): Promise<TargetResponse> {
    request.signal?.throwIfAborted();
    const fill = (template: string) =>
      fillPlaceholders(template, { prompt: request.prompt, workspace: request.workspace });
    const args = (this.#options.args ?? []).map(fill);
    const transcript: TranscriptEvent[] = [{ kind: 'message', role: 'user', text: request.prompt }];
    const { launched, startError } = await this.#launch(request, args);
    const child = launched?.process;
    const output = new CapturedOutput(child, this.#maxOutputBytes);
    child?.stdin.end(this.#options.stdin === undefined ? '' : fill(this.#options.stdin));
    const { exit, timedOut } = await this.#awaitEnd(launched, startError, request.signal);

    const reply = output.reply();
    transcript.push({
      kind: 'process',
      command: this.#options.command,
      args,
      exitCode: exit.code,
      signal: exit.signal,
      timedOut,
      stderr: output.stderr(),
      stdoutTruncated: output.stdoutTruncated,
    });
    transcript.push({ kind: 'message', role: 'assistant', text: reply });
    this.#throwIfFailed(request.signal, exit, timedOut, output.stderrEnd, {
      launched,
      startError,
      transcript,
    });
    return { reply, transcript };
  }

  /** Starts the program contained; a start that fails is kept as `startError` (the transcript still ends). */
  async #launch(
    request: TargetRequest,
    args: string[],
  ): Promise<{ launched: Launched | undefined; startError: Error | undefined }> {
    const settings = await this.#containment.settings();
    try {
      const launched = launchInAttempt(settings, {
        command: this.#options.command,
        args,
        workspace: request.workspace,
        attempt: request.attempt,
        programFiles: this.#programFiles(),
        // PWD follows the working directory: an inherited or absent PWD would point some CLIs
        // (opencode) somewhere other than the attempt's workspace.
        // The attack's variables go under the target's own (a preset's endpoint and key stay its own).
        env: {
          ...request.env,
          ...this.#options.env,
          PWD: request.attempt?.workspace.path ?? request.workspace,
        },
      });
      return { launched, startError: undefined };
    } catch (error) {
      return { launched: undefined, startError: error as Error };
    }
  }

  /**
   * Waits for every process to be gone, stopping them at the timeout or on abort. The timer and the abort
   * stay armed until every process is gone and the output is closed: each wait is bounded (the sandbox's
   * reap and drain bounds), so nothing can outlast them unnoticed.
   */
  async #awaitEnd(
    launched: Launched | undefined,
    startError: Error | undefined,
    signal: AbortSignal | undefined,
  ): Promise<{ exit: CommandExit; timedOut: boolean }> {
    const child = launched?.process;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      void child?.stop();
    }, this.#timeoutMs);
    const onAbort = () => void child?.stop();
    signal?.addEventListener('abort', onAbort, { once: true });
    // Aborted while the containment was being prepared: the listener never fires for a signal that has
    // already fired, and the agent would run on to its timeout after the attempt was given up.
    if (signal?.aborted) onAbort();
    let exit: CommandExit;
    try {
      exit =
        child === undefined
          ? { code: null, signal: null, spawnError: startError?.message }
          : await child.ended;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      launched?.release();
    }
    return { exit, timedOut };
  }

  /** A run given up, a program that did not start, timed out or did not exit 0 is a TargetError. */
  #throwIfFailed(
    signal: AbortSignal | undefined,
    exit: CommandExit,
    timedOut: boolean,
    stderrEnd: Buffer,
    ran: { launched: Launched | undefined; startError: Error | undefined; transcript: TranscriptEvent[] },
  ): void {
    const { transcript } = ran;
    if (signal?.aborted) {
      const reason: unknown = signal.reason;
      // The attempt's time budget ran out: a failed attempt, not a cancelled run, so what the agent did
      // and said until then is kept (a timed-out attempt's partial transcript).
      if (reason instanceof Error && reason.name === 'TimeoutError') {
        throw new TargetError(
          `the command was stopped: ${reason.message}${stderrTail(stderrEnd)}`,
          transcript,
          {
            cause: reason,
          },
        );
      }
      throw reason;
    }
    if (exit.spawnError !== undefined) {
      throw new TargetError(`the command could not be started: ${exit.spawnError}`, transcript, {
        cause: ran.startError,
      });
    }
    if (timedOut) {
      throw new TargetError(
        `the command timed out after ${this.#timeoutMs} ms${stderrTail(stderrEnd)}`,
        transcript,
      );
    }
    if (exit.code !== 0) {
      const how = exit.code === null ? `was killed by ${exit.signal}` : `exited with status ${exit.code}`;
      const withheld = ran.launched?.campaignDirectoryWithheld;
      throw new TargetError(
        `the command ${how}${stderrTail(stderrEnd)}${withheld === undefined ? '' : `; note: ${withheld}`}`,
        transcript,
      );
    }
  }

  identifier(): ComponentIdentifier {
    return {
      type: 'CommandTarget',
      version: '1',
      params: {
        command: this.#options.command,
        args: [...(this.#options.args ?? [])],
        stdin: this.#options.stdin ?? null,
        envNames: Object.keys(this.#options.env ?? {}).sort(),
        timeoutMs: this.#timeoutMs,
        maxOutputBytes: this.#maxOutputBytes,
      },
    };
  }
}

type CommandExit = { code: number | null; signal: string | null; spawnError?: string | undefined };

/**
 * What the program printed: stdout up to `maxOutputBytes` (the reply), and the head and the tail of
 * stderr (a CLI's final error is usually its last line).
 */
class CapturedOutput {
  readonly #stdout: Buffer[] = [];
  #stdoutBytes = 0;
  stdoutTruncated = false;
  readonly #stderr: Buffer[] = [];
  #stderrBytes = 0;
  stderrEnd = Buffer.alloc(0);

  constructor(child: ContainedProcess | undefined, maxOutputBytes: number) {
    child?.stdout.on('data', (chunk: Buffer) => {
      const room = maxOutputBytes - this.#stdoutBytes;
      if (room <= 0) {
        this.stdoutTruncated = true;
        return;
      }
      if (chunk.length > room) this.stdoutTruncated = true;
      this.#stdout.push(chunk.subarray(0, room));
      this.#stdoutBytes += Math.min(chunk.length, room);
    });
    child?.stderr.on('data', (chunk: Buffer) => {
      if (this.#stderrBytes < STDERR_HEAD_BYTES)
        this.#stderr.push(chunk.subarray(0, STDERR_HEAD_BYTES - this.#stderrBytes));
      this.#stderrBytes += chunk.length;
      this.stderrEnd = Buffer.concat([this.stderrEnd, chunk]).subarray(-STDERR_TAIL_BYTES);
    });
  }

  reply(): string {
    return Buffer.concat(this.#stdout).toString('utf8');
  }

  stderr(): string {
    return keptStderr(this.#stderr, this.stderrEnd, this.#stderrBytes);
  }
}

/** Any `{name}` placeholder: an argument that holds one is filled per attempt, never a program file. */

function keptStderr(head: readonly Buffer[], end: Buffer, total: number): string {
  if (total <= STDERR_HEAD_BYTES + STDERR_TAIL_BYTES) {
    return Buffer.concat([...head, end.subarray(Math.max(0, end.length - (total - STDERR_HEAD_BYTES)))])
      .subarray(0, total)
      .toString('utf8');
  }
  const omitted = total - STDERR_HEAD_BYTES - STDERR_TAIL_BYTES;
  return `${Buffer.concat(head).toString('utf8')}\n… [${omitted} bytes of stderr not kept] …\n${end.toString('utf8')}`;
}

/** The last lines of stderr (at most 600 characters), for the error shown beside the attempt. */
const STDERR_TAIL_CHARS = 600;
function stderrTail(end: Buffer): string {
  const text = end.toString('utf8').trimEnd();
  if (text === '') return '';
  const tail = text.length > STDERR_TAIL_CHARS ? `…${text.slice(-STDERR_TAIL_CHARS)}` : text;
  return `; its stderr ends: ${tail}`;
}
