import * as z from 'zod';
import { TimeoutMsSchema } from '../models/timeout.js';
import { MOCK_MODES } from './mock-modes.js';
import {
  type PresetAgentTargetConfig,
  PresetAgentTargetConfigSchema,
} from './presets/agent-target-config.js';

/**
 * The `target:` section of a campaign, as a pure schema (no target code, no MCP SDK: the campaign format
 * can be validated without loading an agent; `create-target.ts` builds one). Validated strictly (an
 * unknown key is an error, so a typo never silently falls back to a default). Secrets are never
 * configured here: a chat endpoint names the *environment variable* holding its key (`apiKeyEnv`).
 *
 * An agent is a planner × a toolbox. `kind: agent` says so directly:
 *
 * ```yaml
 * target: { kind: agent, planner: { kind: chat, baseUrl: http://127.0.0.1:8080/v1, model: m },
 *           toolbox: { kind: mcp, command: npx, args: [server-filesystem, '{workspace}'] } }
 * ```
 *
 * or names a coding-agent CLI by preset, pointed at a model (`src/targets/presets/`):
 *
 * ```yaml
 * target: { kind: agent, preset: qwen-code, model: { baseUrl: http://127.0.0.1:8719/v1, name: m } }
 * ```
 *
 * `mock`, `chat` and `mcp` are the older spellings of the same pairs (mock or chat planner with the
 * workspace tools; either planner with an MCP server), kept working; `command` runs any program.
 */

const PositiveInt = z.number().int().positive();
/** Every timeout: 1 to 2^31−1 ms (SPEC §11). */
const TimeoutMs = TimeoutMsSchema;
const EnvName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name');

const ChatFields = {
  baseUrl: z.string().url(),
  model: z.string().min(1),
  apiKeyEnv: EnvName.optional(),
  systemPrompt: z.string().optional(),
  maxTurns: PositiveInt.optional(),
  requestTimeoutMs: TimeoutMs.optional(),
  maxRetries: z.number().int().nonnegative().optional(),
  retryBaseDelayMs: z.number().int().nonnegative().optional(),
  temperature: z.number().min(0).max(2).optional(),
};

const MockFields = { mode: z.enum(MOCK_MODES), discloseActions: z.boolean().optional() };

const McpServerFields = {
  command: z.string().min(1),
  args: z.array(z.string()).optional(),
  env: z.record(EnvName, z.string()).optional(),
  timeoutMs: TimeoutMs.optional(),
};

export const MockTargetConfigSchema = z.strictObject({ kind: z.literal('mock'), ...MockFields });

export const ChatTargetConfigSchema = z.strictObject({ kind: z.literal('chat'), ...ChatFields });

export const McpTargetConfigSchema = z.strictObject({
  kind: z.literal('mcp'),
  server: z.strictObject(McpServerFields),
  agent: z.discriminatedUnion('planner', [
    z.strictObject({ planner: z.literal('mock'), ...MockFields }),
    z.strictObject({ planner: z.literal('chat'), ...ChatFields }),
  ]),
});

/** Who decides which tools to call. */
export const PlannerConfigSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('mock'), ...MockFields }),
  z.strictObject({ kind: z.literal('chat'), ...ChatFields }),
]);
export type PlannerConfig = z.infer<typeof PlannerConfigSchema>;

/** Which tools: Witness's confined workspace tools, or an MCP server started per attempt. */
export const ToolboxConfigSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('workspace') }),
  z.strictObject({ kind: z.literal('mcp'), ...McpServerFields }),
]);
export type ToolboxConfig = z.infer<typeof ToolboxConfigSchema>;

export const AgentTargetConfigSchema = z.strictObject({
  kind: z.literal('agent'),
  planner: PlannerConfigSchema,
  toolbox: ToolboxConfigSchema.default({ kind: 'workspace' }),
});
export type AgentTargetConfig = z.infer<typeof AgentTargetConfigSchema>;

/**
 * `kind: agent` in either spelling, picked by the presence of `preset:` and then validated strictly as
 * that spelling alone, so a typo is reported against the form the author meant (`preset: qwen-cod` names
 * the presets; `planer:` is an unrecognized key beside a missing `planner`), never as an opaque "no
 * union member matched".
 */
const AgentKindConfigSchema = z
  .looseObject({ kind: z.literal('agent') })
  .transform((value, context): AgentTargetConfig | PresetAgentTargetConfig => {
    const schema = Object.hasOwn(value, 'preset') ? PresetAgentTargetConfigSchema : AgentTargetConfigSchema;
    const result = schema.safeParse(value);
    if (result.success) return result.data;
    for (const issue of result.error.issues) context.addIssue({ ...issue });
    return z.NEVER;
  });

export const CommandTargetConfigSchema = z.strictObject({
  kind: z.literal('command'),
  command: z.string().min(1),
  args: z.array(z.string()).optional(),
  stdin: z.string().optional(),
  env: z.record(EnvName, z.string()).optional(),
  timeoutMs: TimeoutMs.optional(),
  maxOutputBytes: PositiveInt.optional(),
});

export const TargetConfigSchema = z.discriminatedUnion('kind', [
  AgentKindConfigSchema,
  MockTargetConfigSchema,
  ChatTargetConfigSchema,
  McpTargetConfigSchema,
  CommandTargetConfigSchema,
]);
export type TargetConfig = z.infer<typeof TargetConfigSchema>;

/** The configurations that run a program as the agent: `command`, and `agent` by preset. */
export type ProgramTargetConfig = Extract<TargetConfig, { kind: 'command' }> | PresetAgentTargetConfig;
/** The configurations that are a planner × a toolbox. */
export type PlannerToolboxConfig = Exclude<TargetConfig, ProgramTargetConfig>;

/** True for `kind: agent` with `preset:` (a coding-agent CLI). */
export function isPresetAgent(config: TargetConfig): config is PresetAgentTargetConfig {
  return config.kind === 'agent' && 'preset' in config;
}

/** True for the kinds that are a planner × a toolbox (not a program run as the agent). */
export function isPlannerToolbox(config: TargetConfig): config is PlannerToolboxConfig {
  return config.kind !== 'command' && !isPresetAgent(config);
}

/** Any planner × toolbox kind as its pair (the one form the factory builds from). */
export function agentParts(config: PlannerToolboxConfig): {
  planner: PlannerConfig;
  toolbox: ToolboxConfig;
} {
  switch (config.kind) {
    case 'agent':
      return { planner: config.planner, toolbox: config.toolbox };
    case 'mock':
    case 'chat': {
      const { kind, ...fields } = config;
      return { planner: { kind, ...fields } as PlannerConfig, toolbox: { kind: 'workspace' } };
    }
    case 'mcp': {
      const { planner, ...fields } = config.agent;
      return {
        planner: { kind: planner, ...fields } as PlannerConfig,
        toolbox: { kind: 'mcp', ...config.server },
      };
    }
  }
}
