import { statSync } from 'node:fs';
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
 * attempt) — and, under `proxy`, the resolv.conf that points the sandbox at Witness's name resolver. Kept per run object, so concurrent attempts of one run share it and a finished run's CA is
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
  if (settings.mode !== 'proxy') return { settings };
  const { writeCaBundle, writeResolvConf } = await import('../network/attempt-network.js');
  // Shown over the host's /etc/resolv.conf, which bubblewrap can cover only where it is a file (a
  // dangling link could not be mounted over on the read-only host; lookups then stay unrecorded).
  const resolvConfPath = isFile('/etc/resolv.conf') ? writeResolvConf(runPath) : undefined;
  if (!settings.intercept) return { settings, resolvConfPath };
  const { createCertificateAuthority } = await import('../network/certificate-authority.js');
  const ca = createCertificateAuthority();
  return { settings, ca, caBundlePath: writeCaBundle(runPath, ca), resolvConfPath };
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
