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
