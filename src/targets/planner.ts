import type { ComponentIdentifier } from '../models/identifier.js';
import type { OpenedToolbox } from './toolbox.js';
import type { TranscriptEvent } from './transcript.js';

/**
 * The planner axis of an agent target: who decides which tools to call (the deterministic mock planner,
 * or a chat model). A planner never opens or closes tools; the agent target hands it an open toolbox.
 */
export interface Planner {
  plan(request: PlanRequest): Promise<PlanResult>;
  /** Who decides, by kind and non-secret configuration (never an API key). */
  identifier(): ComponentIdentifier;
}

export interface PlanRequest {
  prompt: string;
  /** Absolute path of the attempt's workspace. */
  workspace: string;
  tools: OpenedToolbox;
  signal?: AbortSignal | undefined;
}

export interface PlanResult {
  /** What the agent said it did: a claim. */
  reply: string;
  transcript: TranscriptEvent[];
}
