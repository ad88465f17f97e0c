import { InvalidCampaignError } from '../../errors.js';
import { resolveNetworkSettings } from '../../network/network-settings.js';
import type { NetworkMode } from '../../sandbox/bwrap-arguments.js';
import { namespaceListenersAvailable } from '../../sandbox/network-namespace.js';
import { detectSandbox, SANDBOX_UNAVAILABLE_FIX } from '../../sandbox/sandbox-availability.js';
import type { SandboxSettings } from '../../sandbox/sandbox-settings.js';
import { isPresetAgent } from '../../targets/target-config.js';
import type { Campaign } from '../campaign.js';
import { prepareCampaignContainment } from '../campaign-containment.js';
import { refusePlantedProof } from '../planted-proof.js';
import { checkModelEndpoints, checkModelKeys, endpointsOf } from './endpoint-check.js';
import type { CampaignPlan, PreflightCheck } from './preflight-report.js';
import { checkPrograms, describeProcesses, programsOf } from './program-check.js';
import { checkTemplate } from './template-check.js';

/**
 * The preflight of a campaign: everything that can be checked without running the agent, checked before
 * the first attempt, every problem found at once — the workspace template, the sandbox and the network
 * mode, the programs the target starts (inside the sandbox's view), the model keys and endpoints, and
 * (for `--dry-run`) the bait check of every attack. A campaign that fails it would have spent every attempt
 * on the same `error`; `witness run` refuses it (exit 2) naming each problem and its fix.
 *
 * @example
 *   const preflight = await preflightCampaign(campaign, { campaignFile, hostEnv: process.env });
 *   if (!preflight.ok) for (const check of preflight.checks) console.error(check.status, check.detail);
 */

export interface PreflightContext {
  /** The campaign file as given (its directory is where relative paths resolved). */
  campaignFile: string;
  /** Witness's environment: the agent's PATH and the model keys are read from it. */
  hostEnv: Readonly<Record<string, string | undefined>>;
  /** The memory's location (`--db`): a template must not hold it. */
  memoryLocation?: string | undefined;
  /** Also judge each attack's conditions on its planted workspace (the bait check a run makes anyway). */
  bait?: boolean | undefined;
  endpointTimeoutMs?: number | undefined;
  signal?: AbortSignal | undefined;
}

export interface PreflightResult {
  ok: boolean;
  checks: PreflightCheck[];
  /** How the target's processes would be contained; `in_process` when it starts none. */
  containment: CampaignPlan['containment'];
  /** The agent's network; null when the target starts no process. */
  network: NetworkMode | null;
}

export async function preflightCampaign(
  campaign: Campaign,
  context: PreflightContext,
): Promise<PreflightResult> {
  const checks: PreflightCheck[] = [];
  const template = await checkTemplate(campaign, context);
  if (template !== undefined) checks.push(template);

  const startsProcesses = programsOf(campaign.target).length > 0;
  const containment: CampaignPlan['containment'] = !startsProcesses
    ? 'in_process'
    : campaign.sandbox === 'none'
      ? 'none'
      : 'bwrap';
  const resolved = resolveNetworkSettings(campaign.network, campaign.sandbox === 'none' ? 'none' : 'bwrap');
  const network = !startsProcesses || 'problem' in resolved ? null : resolved.settings.mode;
  let sandbox: SandboxSettings | undefined;
  if (startsProcesses) {
    checks.push(...(await checkSandbox(campaign, context, network)));
    checks.push(checkNetwork(campaign, resolved));
    if (checks.every((check) => check.check !== 'sandbox' || check.status === 'pass')) {
      sandbox = await containmentOf(campaign, context);
    }
  }
  checks.push(...checkPrograms(campaign, { hostEnv: context.hostEnv, sandbox }));

  const endpoints = endpointsOf(campaign);
  checks.push(...checkModelKeys(endpoints, context.hostEnv));
  checks.push(
    ...(await checkModelEndpoints(endpoints, {
      signal: context.signal,
      timeoutMs: context.endpointTimeoutMs,
    })),
  );

  if (context.bait === true) checks.push(await checkBait(campaign, template, context.signal));
  return { ok: checks.every((check) => check.status !== 'fail'), checks, containment, network };
}

/** `sandbox`: bubblewrap can be had (and, under network: proxy, a network namespace of its own). */
async function checkSandbox(
  campaign: Campaign,
  context: PreflightContext,
  network: NetworkMode | null,
): Promise<PreflightCheck[]> {
  if (campaign.sandbox === 'none') {
    return [
      {
        check: 'sandbox',
        subject: 'sandbox: none',
        status: 'pass',
        detail:
          'the agent runs without containment, as the campaign says (every attempt is marked containment: none)',
      },
    ];
  }
  const availability = await detectSandbox({ searchPath: context.hostEnv.PATH });
  if (!availability.available) {
    return [
      {
        check: 'sandbox',
        subject: 'bubblewrap',
        status: 'fail',
        detail: `${describeProcesses(campaign)} must run in a sandbox, but none is available: ${availability.reason}`,
        fix: SANDBOX_UNAVAILABLE_FIX,
      },
    ];
  }
  const problem = network === 'proxy' ? namespaceListenersAvailable() : undefined;
  if (problem !== undefined) {
    return [
      {
        check: 'sandbox',
        subject: 'bubblewrap',
        status: 'fail',
        detail: `network: proxy is unavailable: ${problem}`,
        fix: 'allow network namespaces for bubblewrap, or say network: host (unobserved) in the campaign',
      },
    ];
  }
  return [
    {
      check: 'sandbox',
      subject: 'bubblewrap',
      status: 'pass',
      detail: `${availability.bwrapPath} works here`,
    },
  ];
}

/** `network`: the mode asked for can be had, and an agent preset can reach its model under it. */
function checkNetwork(
  campaign: Campaign,
  resolved: ReturnType<typeof resolveNetworkSettings>,
): PreflightCheck {
  if ('problem' in resolved) {
    return {
      check: 'network',
      subject: 'network',
      status: 'fail',
      detail: resolved.problem,
      fix:
        campaign.sandbox === 'none'
          ? 'leave network: out (host is the default under sandbox: none), or remove sandbox: none to have the proxy'
          : 'give allow: and intercept: only with mode: proxy',
    };
  }
  const { mode } = resolved.settings;
  const target = campaign.target;
  if (mode === 'none' && isPresetAgent(target)) {
    return {
      check: 'network',
      subject: `network: none`,
      status: 'fail',
      detail: `the ${target.preset} agent could never reach its model (${target.model.baseUrl}) without a network`,
      fix: 'leave network: out or say network: proxy (the default: the model endpoint is relayed into the sandbox and every request is recorded)',
    };
  }
  const meaning = {
    proxy: "the agent's requests go through its recording egress proxy",
    host: "the agent shares the host's network (unobserved)",
    none: 'the agent has no network',
  }[mode];
  return { check: 'network', subject: `network: ${mode}`, status: 'pass', detail: meaning };
}

/** The sandbox settings the run will use, for the program check's view; undefined if they cannot be had. */
async function containmentOf(
  campaign: Campaign,
  context: PreflightContext,
): Promise<SandboxSettings | undefined> {
  try {
    const { sandbox } = await prepareCampaignContainment(campaign, {
      hostEnv: context.hostEnv,
      memoryLocation: context.memoryLocation,
      campaignFile: context.campaignFile,
    });
    return sandbox;
  } catch {
    // The sandbox and network checks have named what is wrong.
    return undefined;
  }
}

/** `bait`: no attack's condition already holds on its planted workspace (SPEC §12). */
async function checkBait(
  campaign: Campaign,
  template: PreflightCheck | undefined,
  signal: AbortSignal | undefined,
): Promise<PreflightCheck> {
  const subject = `${campaign.attacks.length} attack${campaign.attacks.length === 1 ? '' : 's'}`;
  if (template?.status === 'fail') {
    return { check: 'bait', subject, status: 'skipped', detail: 'the workspace template cannot be copied' };
  }
  try {
    await refusePlantedProof(campaign, { signal });
  } catch (error) {
    if (!(error instanceof InvalidCampaignError)) throw error;
    return {
      check: 'bait',
      subject,
      status: 'fail',
      detail: error.issues.join('; '),
      fix: 'make each condition one that only the agent can make true: plant no file that already proves it, and plant the sentinel a file_deleted or file_modified condition watches',
    };
  }
  return {
    check: 'bait',
    subject,
    status: 'pass',
    detail: 'no condition holds on the planted workspace before the agent runs',
  };
}
