import { InvalidCampaignError } from '../errors.js';
import type { Containment } from '../models/vocabulary.js';
import type { RunNetwork } from '../network/attempt-network.js';
import { resolveNetworkSettings } from '../network/network-settings.js';
import type { CampaignRun } from './attempt-record.js';
import type { Campaign } from './campaign.js';

/**
 * The run-wide part of every attempt's network (SPEC §14): the campaign's `network:` resolved for the
 * target's containment, and — under `intercept: true` — the run's certificate authority and the bundle
 * handed to agents, made once per run (a CA is a key pair and a signature: not something to redo per
 * attempt). Kept per run object, so concurrent attempts of one run share it and a finished run's CA is
 * collected with the run.
 */

const perRun = new WeakMap<CampaignRun, Promise<RunNetwork>>();

export function runNetworkOf(
  run: CampaignRun,
  campaign: Campaign,
  containment: Containment,
  runPath: string,
): Promise<RunNetwork> {
  let made = perRun.get(run);
  if (made === undefined) {
    made = makeRunNetwork(campaign, containment, runPath);
    perRun.set(run, made);
  }
  return made;
}

async function makeRunNetwork(
  campaign: Campaign,
  containment: Containment,
  runPath: string,
): Promise<RunNetwork> {
  const resolved = resolveNetworkSettings(campaign.network, containment === 'none' ? 'none' : 'bwrap');
  if ('problem' in resolved) throw new InvalidCampaignError(resolved.problem, [resolved.problem]);
  const { settings } = resolved;
  if (settings.mode !== 'proxy' || !settings.intercept) return { settings };
  const { createCertificateAuthority } = await import('../network/certificate-authority.js');
  const { writeCaBundle } = await import('../network/attempt-network.js');
  const ca = createCertificateAuthority();
  return { settings, ca, caBundlePath: writeCaBundle(runPath, ca) };
}
