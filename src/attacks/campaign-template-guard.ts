import { realpathSync } from 'node:fs';
import { sep } from 'node:path';
import { InvalidCampaignError } from '../errors.js';
import { isMemoryFile, resolveMemoryFile } from '../memory/memory-path.js';
import type { Campaign } from './campaign.js';

/**
 * Refuses a workspace template that holds the campaign file or the memory (SPEC §13). The template is
 * copied into every attempt's workspace, where the agent reads and writes freely: `workspace: {template:
 * .}` beside the campaign gave every agent the campaign (every attack's payload and the condition it is
 * judged by) and the live memory (other attempts' stored results and evidence), which no sandbox rule
 * could hide, since the copy is the agent's own workspace.
 */
export function refuseExposingTemplate(
  campaign: Campaign,
  context: { campaignFile: string; memoryLocation?: string | undefined },
): void {
  const held = heldByTemplate(campaign, context);
  if (held.length === 0) return;
  const problem = `${context.campaignFile}: workspace.template ${campaign.workspace.template} holds ${held.join(' and ')}: it would be copied into every attempt's workspace, where the agent reads every attack and the stored results; ${TEMPLATE_EXPOSURE_FIX}`;
  throw new InvalidCampaignError(problem, [problem]);
}

export const TEMPLATE_EXPOSURE_FIX =
  'keep the template in a directory of its own (for example ./template-repo beside the campaign), and the memory outside it (--db)';

/** What of the campaign file and the memory the template holds ("the campaign file (/x/c.yaml)"). */
export function heldByTemplate(
  campaign: Campaign,
  context: { campaignFile: string; memoryLocation?: string | undefined },
): string[] {
  const template = campaign.workspace.template;
  if (template === undefined) return [];
  const root = realOrUndefined(template);
  // A template that cannot be resolved is not copied either: the preflight names that problem.
  if (root === undefined) return [];
  const held: string[] = [];
  const campaignFile = realOrUndefined(context.campaignFile);
  if (campaignFile !== undefined && within(root, campaignFile))
    held.push(`the campaign file (${campaignFile})`);
  if (context.memoryLocation !== undefined && isMemoryFile(context.memoryLocation)) {
    const memory = resolveMemoryFile(context.memoryLocation);
    if (within(root, memory)) held.push(`the memory (${memory})`);
  }
  return held;
}

function within(root: string, path: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);
}

function realOrUndefined(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}
