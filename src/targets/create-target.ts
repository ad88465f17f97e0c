import { InvalidOptionError } from '../errors.js';
import type { SandboxSettings } from '../sandbox/sandbox-settings.js';
import type { SecretRedactor } from '../text/secret-redactor.js';
import { AgentTarget } from './agent-target.js';
import { ChatPlanner } from './chat-planner.js';
import { CommandTarget } from './command-target.js';
import { McpToolboxProvider } from './mcp-toolbox-provider.js';
import { MockPlanner } from './mock-planner.js';
import type { Planner } from './planner.js';
import { PresetAgentTarget } from './preset-agent-target.js';
import { PLACEHOLDER_API_KEY } from './presets/agent-target-config.js';
import type { Target } from './target.js';
import {
  agentParts,
  isPresetAgent,
  type PlannerConfig,
  type TargetConfig,
  type ToolboxConfig,
} from './target-config.js';
import { type ToolboxProvider, WorkspaceToolboxProvider } from './toolbox.js';

/**
 * Builds the target a campaign's `target:` describes: every agent kind becomes an {@link AgentTarget} of
 * a planner and a toolbox, `command` a {@link CommandTarget}, an agent by preset a {@link PresetAgentTarget} (a command
 * target that knows the CLI). A named key variable that is unset is an
 * error now, not at the first request.
 */

export interface CreateTargetContext {
  /** The environment to read `apiKeyEnv` from and to give a command agent (the CLI passes its own). */
  env: Readonly<Record<string, string | undefined>>;
  /**
   * How out-of-process agents (a command, an MCP server) are contained, resolved for the run (see
   * `resolveSandboxSettings`). When absent they require bubblewrap and resolve it themselves.
   */
  sandbox?: SandboxSettings | undefined;
  /**
   * The campaign's secret redactor (`secrets:` plus every `apiKeyEnv`): a preset agent's recording proxy
   * redacts with it before storing an exchange.
   */
  redactor?: SecretRedactor | undefined;
}

export function createTarget(config: TargetConfig, context: CreateTargetContext): Target {
  if (config.kind === 'command') {
    const { kind: _kind, ...options } = config;
    return new CommandTarget({ ...options, baseEnv: context.env, sandbox: context.sandbox });
  }
  if (isPresetAgent(config)) {
    const { kind: _kind, model, ...options } = config;
    const apiKey = keyFor(model.apiKeyEnv, context) ?? PLACEHOLDER_API_KEY;
    return new PresetAgentTarget({
      ...options,
      model: { ...model, apiKey },
      baseEnv: context.env,
      sandbox: context.sandbox,
      redactor: context.redactor,
    });
  }
  const parts = agentParts(config);
  return new AgentTarget({
    planner: createPlanner(parts.planner, context),
    toolbox: createToolbox(parts.toolbox, context),
  });
}

function createPlanner(config: PlannerConfig, context: CreateTargetContext): Planner {
  if (config.kind === 'mock') return new MockPlanner(config);
  const { kind: _kind, ...options } = config;
  return new ChatPlanner({ ...options, apiKey: keyFor(config.apiKeyEnv, context) });
}

function createToolbox(config: ToolboxConfig, context: CreateTargetContext): ToolboxProvider {
  if (config.kind === 'workspace') return new WorkspaceToolboxProvider();
  const { kind: _kind, ...server } = config;
  return new McpToolboxProvider({ ...server, sandbox: context.sandbox });
}

function keyFor(name: string | undefined, context: CreateTargetContext): string | undefined {
  if (name === undefined) return undefined;
  const value = context.env[name];
  if (value === undefined || value === '') {
    throw new InvalidOptionError(`the environment variable ${name} (apiKeyEnv) is not set`);
  }
  return value;
}
