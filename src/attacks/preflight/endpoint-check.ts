import { describeNetworkError } from '../../net/network-error.js';
import { agentParts, isPresetAgent, type TargetConfig } from '../../targets/target-config.js';
import type { Campaign } from '../campaign.js';
import type { PreflightCheck } from './preflight-report.js';

/**
 * The model endpoints a campaign talks to — an agent preset's model, a chat planner's, each adaptive
 * attack's attacker — checked before any attempt: the variable named by `apiKeyEnv` is set, and the
 * endpoint answers one bounded request (`GET` of its base URL, no redirect followed, no body read, within
 * {@link ENDPOINT_PROBE_TIMEOUT_MS}). Any HTTP answer below 500 counts as answering (the probe does not
 * judge the key or the path: APIs answer a bare GET differently); a refused connection, a name that does
 * not resolve, a timeout or a 5xx (a gateway whose model is down) fails. Without this an endpoint that is
 * down made every attempt run to its own failure, minutes each, and end `error`.
 */

export const ENDPOINT_PROBE_TIMEOUT_MS = 5_000;

interface ModelEndpoint {
  /** Who talks to it ("the qwen-code agent's model", "attack a's attacker"). */
  what: string;
  baseUrl: string;
  apiKeyEnv: string | undefined;
}

export function endpointsOf(campaign: Campaign): ModelEndpoint[] {
  const out: ModelEndpoint[] = [];
  const target = targetEndpoint(campaign.target);
  if (target !== undefined) out.push(target);
  for (const attack of campaign.attacks) {
    const model = attack.attacker?.model;
    if (model === undefined) continue;
    out.push({ what: `attack ${attack.id}'s attacker`, baseUrl: model.baseUrl, apiKeyEnv: model.apiKeyEnv });
  }
  // One check per endpoint and key: a matrix gives every attack the same attacker.
  const seen = new Map<string, ModelEndpoint>();
  for (const endpoint of out) {
    const key = `${endpoint.baseUrl}\n${endpoint.apiKeyEnv ?? ''}`;
    const first = seen.get(key);
    if (first === undefined) seen.set(key, endpoint);
    else if (!first.what.endsWith(' and others')) first.what = `${first.what} and others`;
  }
  return [...seen.values()];
}

function targetEndpoint(config: TargetConfig): ModelEndpoint | undefined {
  if (config.kind === 'command') return undefined;
  if (isPresetAgent(config)) {
    return {
      what: `the ${config.preset} agent's model`,
      baseUrl: config.model.baseUrl,
      apiKeyEnv: config.model.apiKeyEnv,
    };
  }
  const { planner } = agentParts(config);
  return planner.kind === 'chat'
    ? { what: 'the chat planner', baseUrl: planner.baseUrl, apiKeyEnv: planner.apiKeyEnv }
    : undefined;
}

/** `model_key`: every `apiKeyEnv` named is set (and not empty) in Witness's environment. */
export function checkModelKeys(
  endpoints: readonly ModelEndpoint[],
  hostEnv: Readonly<Record<string, string | undefined>>,
): PreflightCheck[] {
  return endpoints.flatMap((endpoint): PreflightCheck[] => {
    const name = endpoint.apiKeyEnv;
    if (name === undefined) return [];
    const value = hostEnv[name];
    const subject = `${name} (${endpoint.what})`;
    return value === undefined || value === ''
      ? [
          {
            check: 'model_key',
            subject,
            status: 'fail',
            detail: `the environment variable ${name} is ${value === undefined ? 'not set' : 'empty'}`,
            fix: `export ${name}=<the key of ${endpoint.baseUrl}> before witness run (or drop apiKeyEnv for an endpoint that needs no key, such as witness model serve)`,
          },
        ]
      : [{ check: 'model_key', subject, status: 'pass', detail: `${name} is set` }];
  });
}

/** `model_endpoint`: each endpoint answers one bounded request; all are asked at once. */
export async function checkModelEndpoints(
  endpoints: readonly ModelEndpoint[],
  options: { signal?: AbortSignal | undefined; timeoutMs?: number | undefined } = {},
): Promise<PreflightCheck[]> {
  return Promise.all(endpoints.map((endpoint) => probeEndpoint(endpoint, options)));
}

async function probeEndpoint(
  endpoint: ModelEndpoint,
  options: { signal?: AbortSignal | undefined; timeoutMs?: number | undefined },
): Promise<PreflightCheck> {
  const timeoutMs = options.timeoutMs ?? ENDPOINT_PROBE_TIMEOUT_MS;
  const subject = `${endpoint.baseUrl} (${endpoint.what})`;
  const fix = `start the model server (witness model serve, for the scripted model), or correct baseUrl; run with --no-preflight to skip the checks`;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = options.signal === undefined ? timeout : AbortSignal.any([options.signal, timeout]);
  const started = performance.now();
  try {
    const response = await fetch(endpoint.baseUrl, { method: 'GET', redirect: 'manual', signal });
    await response.body?.cancel().catch(() => undefined);
    const ms = Math.round(performance.now() - started);
    if (response.status >= 500) {
      return {
        check: 'model_endpoint',
        subject,
        status: 'fail',
        detail: `answered HTTP ${response.status}: the server is up but failing (a gateway whose model is down answers so)`,
        fix,
      };
    }
    return {
      check: 'model_endpoint',
      subject,
      status: 'pass',
      detail: `answered HTTP ${response.status} in ${ms} ms`,
    };
  } catch (error) {
    options.signal?.throwIfAborted();
    return {
      check: 'model_endpoint',
      subject,
      status: 'fail',
      detail: timeout.aborted
        ? `did not answer within ${timeoutMs} ms`
        : `could not be reached: ${describeNetworkError(error)}`,
      fix,
    };
  }
}
