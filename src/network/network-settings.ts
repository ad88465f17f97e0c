import * as z from 'zod';
import { NETWORK_MODES, type NetworkMode } from '../models/vocabulary.js';
import { parseAllowRule } from './destination-policy.js';

/**
 * `network:` of a campaign (SPEC §14): a mode (`proxy`, `host`, `none`), or the object form
 * `{ mode: proxy, allow: [api.example.com, "*.example.org:443"], intercept: false }`. One schema for the
 * campaign file and the resolved settings; a module of its own so the campaign schema can name it without
 * loading the proxy.
 */

const AllowEntrySchema = z
  .string()
  .min(1)
  .max(1024)
  .superRefine((rule, ctx) => {
    try {
      parseAllowRule(rule);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message });
    }
  });

export const NetworkConfigSchema = z.union([
  z.enum(NETWORK_MODES),
  z.strictObject({
    mode: z.enum(NETWORK_MODES).default('proxy'),
    /** Destinations the egress proxy forwards (the model endpoint always is). */
    allow: z.array(AllowEntrySchema).default([]),
    /** Terminate TLS with a per-run CA, so HTTPS bodies become evidence too. */
    intercept: z.boolean().default(false),
  }),
]);
export type NetworkConfig = z.infer<typeof NetworkConfigSchema>;

export interface NetworkSettings {
  mode: NetworkMode;
  allow: readonly string[];
  intercept: boolean;
}

/**
 * The run's network settings: `proxy` by default, `host` (the only mode possible) under `sandbox: none`.
 * Returns a problem to refuse the campaign with when it asks for what cannot be had.
 */
export function resolveNetworkSettings(
  config: NetworkConfig | undefined,
  sandbox: 'bwrap' | 'none',
): { settings: NetworkSettings } | { problem: string } {
  const given: NetworkSettings =
    config === undefined
      ? { mode: sandbox === 'none' ? 'host' : 'proxy', allow: [], intercept: false }
      : typeof config === 'string'
        ? { mode: config, allow: [], intercept: false }
        : { mode: config.mode, allow: config.allow, intercept: config.intercept };
  if (sandbox === 'none' && config !== undefined && given.mode !== 'host') {
    return {
      problem: `network: ${given.mode} needs the sandbox's own network namespace; under sandbox: none the agent shares the host's network (network: host, which is the default there)`,
    };
  }
  if (given.mode !== 'proxy' && (given.allow.length > 0 || given.intercept)) {
    return {
      problem: `network.allow and network.intercept belong to mode proxy (the mode is ${given.mode})`,
    };
  }
  return { settings: given };
}
