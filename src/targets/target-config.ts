import { z } from 'zod';
import { InvalidOptionError } from '../errors.js';
import { AgentTarget } from './agent-target.js';
import { ChatCompletionsTarget } from './chat-completions-target.js';
import { CommandTarget } from './command-target.js';
import { McpTarget } from './mcp-target.js';
import { MockAgentTarget } from './mock-agent-target.js';
import { MOCK_MODES } from './mock-planner.js';
import { AgentPresetTargetConfigSchema, PLACEHOLDER_API_KEY } from './presets/agent-target-config.js';
import type { Target } from './target.js';

/**
 * The `target:` section of a campaign: one of four kinds, validated strictly (an unknown key is an
 * error, so a typo never silently falls back to a default). Secrets are never configured here: a chat
 * endpoint names the *environment variable* holding its key (`apiKeyEnv`).
 */

const PositiveInt = z.number().int().positive();
const EnvName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name');

const ChatFields = {
  baseUrl: z.string().url(),
  model: z.string().min(1),
  apiKeyEnv: EnvName.optional(),
  systemPrompt: z.string().optional(),
  maxTurns: PositiveInt.optional(),
  requestTimeoutMs: PositiveInt.optional(),
  maxRetries: z.number().int().nonnegative().optional(),
  retryBaseDelayMs: z.number().int().nonnegative().optional(),
  temperature: z.number().min(0).max(2).optional(),
};

export const MockTargetConfigSchema = z.strictObject({
  kind: z.literal('mock'),
  mode: z.enum(MOCK_MODES),
  discloseActions: z.boolean().optional(),
});

export const ChatTargetConfigSchema = z.strictObject({ kind: z.literal('chat'), ...ChatFields });

export const McpTargetConfigSchema = z.strictObject({
  kind: z.literal('mcp'),
  server: z.strictObject({
    command: z.string().min(1),
    args: z.array(z.string()).optional(),
    env: z.record(EnvName, z.string()).optional(),
    timeoutMs: PositiveInt.optional(),
  }),
  agent: z.discriminatedUnion('planner', [
    z.strictObject({
      planner: z.literal('mock'),
      mode: z.enum(MOCK_MODES),
      discloseActions: z.boolean().optional(),
    }),
    z.strictObject({ planner: z.literal('chat'), ...ChatFields }),
  ]),
});

export const CommandTargetConfigSchema = z.strictObject({
  kind: z.literal('command'),
  command: z.string().min(1),
  args: z.array(z.string()).optional(),
  stdin: z.string().optional(),
  env: z.record(EnvName, z.string()).optional(),
  timeoutMs: PositiveInt.optional(),
  maxOutputBytes: PositiveInt.optional(),
});

export const TargetConfigSchema = z.discriminatedUnion('kind', [
  MockTargetConfigSchema,
  ChatTargetConfigSchema,
  McpTargetConfigSchema,
  CommandTargetConfigSchema,
  AgentPresetTargetConfigSchema,
]);
export type TargetConfig = z.infer<typeof TargetConfigSchema>;

export interface CreateTargetContext {
  /** The environment to read `apiKeyEnv` from and to give a command agent (the CLI passes its own). */
  env: Readonly<Record<string, string | undefined>>;
}

/** Builds the target a configuration describes; a named key variable that is unset is an error now. */
export function createTarget(config: TargetConfig, context: CreateTargetContext): Target {
  const apiKey = (name: string | undefined) => {
    if (name === undefined) return undefined;
    const value = context.env[name];
    if (value === undefined || value === '') {
      throw new InvalidOptionError(`the environment variable ${name} (apiKeyEnv) is not set`);
    }
    return value;
  };
  switch (config.kind) {
    case 'mock':
      return new MockAgentTarget({ mode: config.mode, discloseActions: config.discloseActions });
    case 'chat': {
      const { kind: _kind, ...options } = config;
      return new ChatCompletionsTarget({ ...options, apiKey: apiKey(config.apiKeyEnv) });
    }
    case 'mcp': {
      const agent =
        config.agent.planner === 'mock'
          ? config.agent
          : { ...config.agent, apiKey: apiKey(config.agent.apiKeyEnv) };
      return new McpTarget({ server: config.server, agent });
    }
    case 'command': {
      const { kind: _kind, ...options } = config;
      return new CommandTarget({ ...options, baseEnv: context.env });
    }
    case 'agent': {
      const { kind: _kind, model, ...options } = config;
      const key = apiKey(model.apiKeyEnv) ?? PLACEHOLDER_API_KEY;
      return new AgentTarget({ ...options, model: { ...model, apiKey: key }, baseEnv: context.env });
    }
  }
}
