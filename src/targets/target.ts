import type { ComponentIdentifier } from '../models/identifier.js';
import type { Containment } from '../models/vocabulary.js';
import type { AttemptDirectories } from '../sandbox/sandbox-settings.js';
import type { TranscriptEvent } from './transcript.js';

/**
 * The seam between attacks and agents: send one prompt to an agent working in one workspace, get its
 * reply and a transcript of what it did. A target never judges; the attack scores the workspace after.
 *
 * ```ts
 * const target = new MockAgentTarget({ mode: 'vulnerable' });
 * const { reply } = await target.send({ prompt: 'Summarize README.md', workspace: '/tmp/ws' });
 * ```
 */
export interface Target {
  send(request: TargetRequest): Promise<TargetResponse>;
  /** Who this target is: kind and non-secret configuration (never an API key). */
  identifier(): ComponentIdentifier;
  /**
   * How the agent's processes are contained (SPEC §11): `bwrap` or `none` for a target that starts
   * processes; `in_process` (the default when absent) for an agent running inside Witness.
   */
  containment?(): Containment;
  /**
   * Readies one attempt for the agent, before the attempt's baseline is taken (SPEC §13: baselines are
   * taken last). Everything Witness writes for the attempt — a preset's configuration in the attempt's
   * home, the hand-over of its directories to the agent's user — is written here, so the change set holds
   * only what the agent itself changed. The attempt is then sent through the returned
   * {@link PreparedAttempt}, which is closed after the agent ended. A target without this method is sent
   * to directly.
   */
  prepareAttempt?(request: AttemptPreparation): Promise<PreparedAttempt>;
}

export interface AttemptPreparation {
  /** Absolute path of the attempt's workspace. */
  workspace: string;
  /** The attempt's held directories (workspace, fresh home, tmp, the run directory to hide). */
  attempt: AttemptDirectories;
  signal?: AbortSignal | undefined;
}

export interface PreparedAttempt {
  /** Sends the prompt to the prepared attempt (as {@link Target.send}, without preparing again). */
  send(request: TargetRequest): Promise<TargetResponse>;
  /**
   * Glob locators, relative to the attempt's home, of the agent CLI's own state (caches, sessions, logs):
   * changes there are listed apart in the change set and left out of its headline counts.
   */
  readonly agentState: readonly string[];
  /**
   * Host paths shown to the agent read-only besides the system directories (SPEC §13): the campaign
   * directory, the program's install directory, the PATH entries. Empty for an agent without a sandbox.
   */
  readonly shownPaths: readonly string[];
  /** Releases what preparing started (a recording proxy); never rejects. */
  close(): Promise<void>;
}

export interface TargetRequest {
  prompt: string;
  /** Absolute path of the attempt's own workspace; the agent's file tools are confined to it. */
  workspace: string;
  /**
   * The attempt's held directories (workspace, fresh home, tmp, the run directory to hide), given by the
   * campaign runner: a sandboxed target mounts these handles rather than re-resolving paths.
   */
  attempt?: AttemptDirectories | undefined;
  /**
   * The attack's own variables for an out-of-process agent (over the campaign's `env:`, under the
   * target's own); an agent running inside Witness has no environment and ignores them.
   */
  env?: Readonly<Record<string, string>> | undefined;
  /** Aborting stops the agent (requests, subprocess) and rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
}

export interface TargetResponse {
  /** What the agent said it did: a claim, to be set beside the file-system verdict. */
  reply: string;
  transcript: TranscriptEvent[];
}
