import * as z from 'zod';
import { TimeoutMsSchema } from '../../models/timeout.js';
import { AGENT_PRESETS } from './agent-preset.js';

/**
 * `target: { kind: agent, preset: … }`: a coding-agent CLI by preset. The key is never written in the
 * campaign: `model.apiKeyEnv` names the environment variable holding it (none is needed for
 * `witness model serve`). `record: true` stores every model exchange in the transcript. The CLI runs in the attempt sandbox like
 * any command agent; under `network: proxy` (the default) its model endpoint is relayed into the sandbox.
 *
 * ```yaml
 * target:
 *   kind: agent
 *   preset: qwen-code
 *   model: { baseUrl: http://127.0.0.1:8719/v1, name: witness-scripted, record: true }
 * ```
 */
export const PresetAgentTargetConfigSchema = z.strictObject({
  kind: z.literal('agent'),
  preset: z.enum(AGENT_PRESETS),
  /** The program to run instead of the preset's default (for example a binary outside PATH). */
  command: z.string().min(1).optional(),
  /** Flags appended after the preset's own. */
  args: z.array(z.string()).optional(),
  model: z.strictObject({
    baseUrl: z.string().url(),
    apiKeyEnv: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')
      .optional(),
    name: z.string().min(1),
    record: z.boolean().optional(),
  }),
  timeoutMs: TimeoutMsSchema.optional(),
  maxOutputBytes: z.number().int().positive().optional(),
});
export type PresetAgentTargetConfig = z.infer<typeof PresetAgentTargetConfigSchema>;

/** The key given to an agent when the campaign names none (the scripted model accepts any). */
export const PLACEHOLDER_API_KEY = 'witness-no-key';
