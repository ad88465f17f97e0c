import type { SandboxSettings } from '../sandbox/sandbox-settings.js';
import { createTarget } from '../targets/create-target.js';
import type { Target } from '../targets/target.js';
import type { SecretRedactor } from '../text/secret-redactor.js';
import { type AttackerModel, chatAttackerFor } from './attacker-model.js';
import type { CampaignRun } from './attempt-record.js';
import type { Attacker, Campaign } from './campaign.js';
import { prepareCampaignContainment } from './campaign-containment.js';
import { loadCampaignFile } from './campaign-file.js';
import { newCampaignRun } from './campaign-run.js';
import { refuseExposingTemplate } from './campaign-template-guard.js';

/**
 * One campaign session: the campaign file loaded and validated, its containment resolved (the sandbox, or
 * the refusal naming the fix; the redactor of its secrets), and its target created with both. `witness run`,
 * `witness run --queue` and `witness worker` each open one, so an attempt runs under the same rules
 * wherever it runs.
 *
 * @example
 *   const session = await openCampaignSession('campaign.yaml', { hostEnv: process.env, memoryLocation: db });
 *   const run = session.newRun();
 */

export interface CampaignSession {
  /** The campaign file as given. */
  readonly campaignFile: string;
  readonly campaign: Campaign;
  /** Absent when the target runs entirely inside Witness (`in_process`). */
  readonly sandbox: SandboxSettings | undefined;
  /** Replaces the campaign's secret values in everything stored or printed (SPEC §11). */
  readonly redactor: SecretRedactor;
  readonly target: Target;
  /** The attacker model of an adaptive attack's `attacker:`, its key read from the host environment. */
  attackers(attacker: Attacker): AttackerModel;
  /** A new run of this campaign against this target (redacted), or the run named by `runId`. */
  newRun(options?: { runId?: string | undefined }): CampaignRun;
}

export interface CampaignSessionContext {
  /** The environment the agents' environment and key variables are read from. */
  hostEnv: Readonly<Record<string, string | undefined>>;
  /** The memory's location (`--db`): a file path is hidden from agents with its side files. */
  memoryLocation?: string | undefined;
  /** The campaign already loaded from `campaignFile` (by the preflight); loaded here otherwise. */
  campaign?: Campaign | undefined;
}

export async function openCampaignSession(
  campaignFile: string,
  context: CampaignSessionContext,
): Promise<CampaignSession> {
  const campaign = context.campaign ?? (await loadCampaignFile(campaignFile));
  // Refuses (exit 2) a template that would copy the campaign or the memory into every workspace.
  refuseExposingTemplate(campaign, { campaignFile, memoryLocation: context.memoryLocation });
  // Refuses (exit 2, naming the fix) an out-of-process target when no sandbox can be had.
  const { sandbox, redactor } = await prepareCampaignContainment(campaign, {
    hostEnv: context.hostEnv,
    memoryLocation: context.memoryLocation,
    campaignFile,
  });
  const target = createTarget(campaign.target, { env: context.hostEnv, sandbox, redactor });
  // A missing attacker key is refused now, before anything runs.
  for (const attack of campaign.attacks)
    if (attack.attacker !== undefined) chatAttackerFor(attack.attacker, context.hostEnv);
  return {
    campaignFile,
    campaign,
    sandbox,
    redactor,
    target,
    attackers: (attacker) => chatAttackerFor(attacker, context.hostEnv),
    newRun: (options) =>
      newCampaignRun({ campaign, target: target.identifier(), runId: options?.runId, redactor }),
  };
}
