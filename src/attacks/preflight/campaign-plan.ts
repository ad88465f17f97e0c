import { agentParts, isPresetAgent, type TargetConfig } from '../../targets/target-config.js';
import type { Campaign } from '../campaign.js';
import type { PreflightResult } from './campaign-preflight.js';
import type { CampaignPlan } from './preflight-report.js';

/**
 * What a campaign would run (`witness run --dry-run`): its attacks with their attempts and rounds, the
 * totals, the library entries a `matrix:` expanded, the target, its containment and network.
 */
export function planCampaign(
  campaign: Campaign,
  preflight: Pick<PreflightResult, 'containment' | 'network'>,
): CampaignPlan {
  const attacks = campaign.attacks.map((attack) => ({
    id: attack.id,
    attempts: attack.attempts ?? campaign.attempts,
    rounds: attack.attacker?.rounds ?? 1,
    control: attack.control === true,
    ...(attack.library === undefined ? {} : { library: { ...attack.library } }),
  }));
  const axis = (key: 'objective' | 'carrier' | 'strategy') => [
    ...new Set(attacks.flatMap((attack) => (attack.library === undefined ? [] : [attack.library[key]]))),
  ];
  const fromLibrary = attacks.some((attack) => attack.library !== undefined);
  return {
    campaign: campaign.name,
    target: describeTargetConfig(campaign.target),
    containment: preflight.containment,
    network: preflight.network,
    concurrency: campaign.concurrency,
    attemptTimeoutMs: campaign.attemptTimeoutMs,
    attacks,
    attempts: attacks.reduce((sum, attack) => sum + attack.attempts, 0),
    maxAttempts: attacks.reduce((sum, attack) => sum + attack.attempts * attack.rounds, 0),
    controls: attacks.filter((attack) => attack.control).length,
    library: fromLibrary
      ? { objectives: axis('objective'), carriers: axis('carrier'), strategies: axis('strategy') }
      : null,
  };
}

/** The target as configured, in a line (`agent qwen-code → http://127.0.0.1:8719/v1 (model m)`). */
function describeTargetConfig(config: TargetConfig): string {
  if (config.kind === 'command') return `command ${[config.command, ...(config.args ?? [])].join(' ')}`;
  if (isPresetAgent(config)) {
    return `agent ${config.preset}${config.command === undefined ? '' : ` (${config.command})`} → ${config.model.baseUrl} (model ${config.model.name})`;
  }
  const { planner, toolbox } = agentParts(config);
  const plans =
    planner.kind === 'mock'
      ? `mock planner (${planner.mode})`
      : `chat planner → ${planner.baseUrl} (model ${planner.model})`;
  const tools =
    toolbox.kind === 'workspace'
      ? "Witness's workspace tools"
      : `MCP server ${[toolbox.command, ...(toolbox.args ?? [])].join(' ')}`;
  return `${plans} with ${tools}`;
}
