import { InvalidOptionError } from '../errors.js';

/**
 * The environment an out-of-process agent gets (SPEC §11): an allowlist, never Witness's own environment.
 * Witness's environment holds what an attack must not reach — model API keys the agent was not given,
 * cloud credentials, `WITNESS_DB` (with which an agent could rewrite the campaign's stored results).
 *
 * The agent gets `PATH`, `LANG`, `LC_ALL` and `TERM` from Witness's environment when set, `HOME` and
 * `TMPDIR` pointing at the attempt's own directories, `USER`, then every variable named in `passEnv`
 * (copied when set), then the campaign's `env:` values (which win).
 */

export const BASE_ENV_NAMES = ['PATH', 'LANG', 'LC_ALL', 'TERM', 'USER'] as const;

/** A portable environment variable name: what `passEnv:`, `env:` and `secrets:` accept. */
export const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface AgentEnvironmentInput {
  /** Witness's own environment (the CLI passes `process.env`); only allowlisted names are read. */
  hostEnv: Readonly<Record<string, string | undefined>>;
  /** Names copied from `hostEnv` when set. */
  passEnv?: readonly string[] | undefined;
  /** Values set as given. */
  env?: Readonly<Record<string, string>> | undefined;
  home: string;
  tmp: string;
}

export function agentEnvironment(input: AgentEnvironmentInput): Record<string, string> {
  const result: Record<string, string> = {};
  for (const name of BASE_ENV_NAMES) {
    const value = input.hostEnv[name];
    if (value !== undefined) result[name] = value;
  }
  result.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  result.HOME = input.home;
  result.TMPDIR = input.tmp;
  for (const name of input.passEnv ?? []) {
    checkName(name, 'passEnv');
    const value = input.hostEnv[name];
    if (value !== undefined) result[name] = value;
  }
  for (const [name, value] of Object.entries(input.env ?? {})) {
    checkName(name, 'env');
    result[name] = value;
  }
  return result;
}

function checkName(name: string, key: string): void {
  if (!ENV_NAME_PATTERN.test(name)) {
    throw new InvalidOptionError(`${key}: ${JSON.stringify(name)} is not an environment variable name`);
  }
}
