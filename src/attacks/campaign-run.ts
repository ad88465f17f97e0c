import { randomUUID } from 'node:crypto';
import type { ComponentIdentifier } from '../models/identifier.js';
import type { SecretRedactor } from '../text/secret-redactor.js';
import type { CampaignRun } from './attempt-record.js';
import { attackExpectation, type Campaign, taskExpectation } from './campaign.js';

/**
 * The record of one campaign run (what was run against what, and when), built in one place for a local
 * run and a queued one, so both store the same thing. The run is redacted once here: the stored run, the
 * records that name it and every output printed from it carry the same (redacted) prompts.
 */

/** A sortable run id: the UTC start to the second, then 8 random hex digits (`20250101T120000Z-1a2b3c4d`). */
export function newRunId(now = new Date()): string {
  return `${now.toISOString().replace(/[-:.]/g, '').slice(0, 15)}Z-${randomUUID().slice(0, 8)}`;
}

export function newCampaignRun(input: {
  campaign: Campaign;
  target: ComponentIdentifier;
  /** Names the run (a resubmission of a queued run); a new id otherwise. */
  runId?: string | undefined;
  redactor?: SecretRedactor | undefined;
  now?: Date | undefined;
}): CampaignRun {
  const { campaign } = input;
  const now = input.now ?? new Date();
  const run: CampaignRun = {
    schemaVersion: 1,
    runId: input.runId ?? newRunId(now),
    campaign: campaign.name,
    description: campaign.description ?? null,
    target: input.target,
    attacks: campaign.attacks.map((attack) => {
      const task = taskExpectation(attack, campaign);
      return {
        id: attack.id,
        prompt: attack.prompt,
        attempts: attack.attempts ?? campaign.attempts,
        expectation: attackExpectation(attack),
        ...(task === undefined ? {} : { task }),
        ...(attack.control === true ? { control: true } : {}),
      };
    }),
    startedAt: now.toISOString(),
  };
  return input.redactor?.active === true ? input.redactor.redactValue(run) : run;
}
