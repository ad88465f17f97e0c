import { InvalidCampaignError } from '../errors.js';
import { isMemoryFile, resolveMemoryFile } from '../memory/memory-path.js';
import { resolveNetworkSettings } from '../network/network-settings.js';
import { resolveSandboxSettings, type SandboxSettings } from '../sandbox/sandbox-settings.js';
import { agentParts, isPresetAgent, type TargetConfig } from '../targets/target-config.js';
import { SecretRedactor, secretsFromEnvironment } from '../text/secret-redactor.js';
import type { Campaign } from './campaign.js';

/**
 * What a campaign run needs for containment, resolved before any attempt (SPEC §11): the sandbox settings
 * when its target starts processes (a command agent, an agent preset's CLI, an MCP server) — refused with a
 * {@link SandboxUnavailableError} (exit 2) when bubblewrap cannot be had and the campaign did not say
 * `sandbox: none` — and the redactor of the secrets it names (`secrets:` plus the `apiKeyEnv` of a chat
 * planner or of an agent preset's model: a model key is always a secret).
 */
export interface CampaignContainment {
  /** Absent when the target runs entirely inside Witness (`in_process`). */
  sandbox?: SandboxSettings | undefined;
  redactor: SecretRedactor;
}

export async function prepareCampaignContainment(
  campaign: Campaign,
  context: {
    hostEnv: Readonly<Record<string, string | undefined>>;
    /** The memory's location (`--db`): a file path is hidden from agents with its side files. */
    memoryLocation?: string | undefined;
    /** The campaign file: its directory is shown to agents read-only (the file itself is hidden). */
    campaignFile?: string | undefined;
  },
): Promise<CampaignContainment> {
  const processKind = startsProcesses(campaign.target);
  const network = resolveNetworkSettings(campaign.network, campaign.sandbox === 'none' ? 'none' : 'bwrap');
  if ('problem' in network) {
    throw new InvalidCampaignError(`campaign "${campaign.name}" refused: ${network.problem}`, [
      network.problem,
    ]);
  }
  const sandbox =
    processKind === undefined
      ? undefined
      : await resolveSandboxSettings({
          mode: campaign.sandbox,
          network: network.settings.mode,
          hostEnv: context.hostEnv,
          passEnv: campaign.passEnv,
          env: campaign.env,
          memoryFile: memoryFile(context.memoryLocation),
          campaignFile: context.campaignFile,
          drainMs: campaign.drainMs,
          runAs: campaign.runAs,
          what: processKind,
        });
  const names = [
    ...(campaign.secrets ?? []),
    ...apiKeyNames(campaign.target),
    // An attacker model's key (SPEC §15) is redacted like the target's.
    ...campaign.attacks.flatMap((attack) => attack.attacker?.model.apiKeyEnv ?? []),
  ];
  return { sandbox, redactor: new SecretRedactor(secretsFromEnvironment(names, context.hostEnv)) };
}

/** What in the target is a process, for the refusal message; undefined when nothing is. */
function startsProcesses(config: TargetConfig): string | undefined {
  if (config.kind === 'command') return `the command target (${config.command})`;
  if (isPresetAgent(config)) return `the ${config.preset} agent (${config.command ?? config.preset})`;
  const { toolbox } = agentParts(config);
  return toolbox.kind === 'mcp' ? `the MCP server (${toolbox.command})` : undefined;
}

function apiKeyNames(config: TargetConfig): string[] {
  if (config.kind === 'command') return [];
  if (isPresetAgent(config)) return config.model.apiKeyEnv === undefined ? [] : [config.model.apiKeyEnv];
  const { planner } = agentParts(config);
  return planner.kind === 'chat' && planner.apiKeyEnv !== undefined ? [planner.apiKeyEnv] : [];
}

/** The memory's file as SQLite opens it: through any symbolic link, where its side files lie too. */
function memoryFile(location: string | undefined): string | undefined {
  return location === undefined || !isMemoryFile(location) ? undefined : resolveMemoryFile(location);
}
