import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { arch, platform } from 'node:os';
import { delimiter, join } from 'node:path';
import type { Writable } from 'node:stream';
import { SandboxUnavailableError } from '../errors.js';
import type { AgentUser } from './agent-user.js';
import {
  type AgentUserPlan,
  commandLine,
  isolationArguments,
  systemViewArguments,
} from './bwrap-arguments.js';
import { systemEntries } from './host-view.js';
import { keyringFilter, keyringFilterSupported } from './seccomp-filter.js';

/**
 * Whether a bubblewrap sandbox can be had here: Linux, `bwrap` on PATH, and namespaces allowed. The last
 * is only known by trying, so a trivial sandbox (`true` under the same flags every attempt uses) is run
 * once per bwrap path and the answer cached for the process.
 *
 * A missing sandbox is never silently replaced by no sandbox: the caller refuses the out-of-process target
 * with {@link SandboxUnavailableError} unless the campaign said `sandbox: none`.
 */

export type SandboxAvailability =
  | {
      available: true;
      bwrapPath: string;
      /** `setpriv`, when an agent user was asked for: the agent becomes that user through it. */
      setprivPath?: string | undefined;
    }
  | { available: false; reason: string };

export interface DetectSandboxOptions {
  /** The PATH searched for `bwrap` (the CLI passes its own); a standard system PATH when absent. */
  searchPath?: string | undefined;
  /** Bound on the trial run. Default 10,000 ms. */
  timeoutMs?: number | undefined;
  /**
   * The unprivileged user agents must run as (Witness runs as root): the trial runs as that user, through
   * `setpriv`, which must then be found among the system programs.
   */
  agentUser?: AgentUser | undefined;
}

const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const cache = new Map<string, Promise<SandboxAvailability>>();

export function detectSandbox(options: DetectSandboxOptions = {}): Promise<SandboxAvailability> {
  if (platform() !== 'linux') {
    return Promise.resolve({ available: false, reason: `bubblewrap needs Linux (this is ${platform()})` });
  }
  if (!keyringFilterSupported()) {
    return Promise.resolve({
      available: false,
      reason: `the sandbox's keyring filter is not built for the ${arch()} architecture`,
    });
  }
  const bwrapPath = findExecutable('bwrap', options.searchPath ?? DEFAULT_PATH);
  if (bwrapPath === undefined) {
    return Promise.resolve({ available: false, reason: '`bwrap` was not found on PATH' });
  }
  const user = options.agentUser;
  const setprivPath = user === undefined ? undefined : findSetpriv();
  if (user !== undefined && setprivPath === undefined) {
    return Promise.resolve({
      available: false,
      reason:
        `Witness runs as root, so agents run as uid ${user.uid}, which needs \`setpriv\` (util-linux; ` +
        'Debian/Ubuntu: `apt-get install util-linux`), and it was not found',
    });
  }
  const plan = user === undefined || setprivPath === undefined ? undefined : { ...user, setprivPath };
  const key = plan === undefined ? bwrapPath : `${bwrapPath} as ${plan.uid}:${plan.gid}`;
  let known = cache.get(key);
  if (known === undefined) {
    known = trySandbox(bwrapPath, options.timeoutMs ?? 10_000, plan);
    cache.set(key, known);
  }
  return known;
}

/** The two ways out when no sandbox can be had (the refusal's and the preflight's fix). */
export const SANDBOX_UNAVAILABLE_FIX =
  'Install bubblewrap (Debian/Ubuntu: `apt-get install bubblewrap`) on Linux with user namespaces allowed, or write ' +
  '`sandbox: none` in the campaign to run it without containment (attempts are then marked ' +
  '`containment: none`).';

/** The refusal an out-of-process target gets when there is no sandbox, naming both ways out. */
export function sandboxUnavailableError(reason: string, what: string): SandboxUnavailableError {
  return new SandboxUnavailableError(
    `${what} must run in a sandbox, but none is available: ${reason}. ${SANDBOX_UNAVAILABLE_FIX}`,
  );
}

/**
 * `setpriv` (util-linux), through which root's agents become their own users. Only a system copy: root
 * must not run a program from a directory someone else may write.
 */
export function findSetpriv(): string | undefined {
  return findExecutable('setpriv', DEFAULT_PATH);
}

function findExecutable(name: string, searchPath: string): string | undefined {
  for (const directory of searchPath.split(delimiter)) {
    if (directory === '' || !directory.startsWith('/')) continue;
    const candidate = join(directory, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

function trySandbox(
  bwrapPath: string,
  timeoutMs: number,
  plan: AgentUserPlan | undefined,
): Promise<SandboxAvailability> {
  // The same isolation, system view, seccomp filter and user as every attempt, around `true`.
  const args = [
    ...isolationArguments(plan),
    ...systemViewArguments(systemEntries()),
    '--remount-ro',
    '/',
    '--seccomp',
    '3',
    '--clearenv',
    '--',
    ...commandLine(plan, 'true', []),
  ];
  return new Promise((resolve) => {
    const child = spawn(bwrapPath, args, { stdio: ['ignore', 'ignore', 'pipe', 'pipe'] });
    const filter = (child.stdio as unknown as Array<Writable | null>)[3] ?? null;
    filter?.on('error', () => undefined);
    filter?.end(keyringFilter());
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      if (stderr.length < 2_000) stderr += chunk.toString('utf8');
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      resolve({ available: false, reason: `${bwrapPath} could not be started: ${error.message}` });
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) {
        resolve({
          available: true,
          bwrapPath,
          ...(plan === undefined ? {} : { setprivPath: plan.setprivPath }),
        });
      } else {
        const how = code === null ? `was killed by ${signal}` : `exited with status ${code}`;
        const detail = stderr.trim() === '' ? '' : `: ${stderr.trim().slice(0, 300)}`;
        resolve({
          available: false,
          reason: `a trial sandbox (${bwrapPath}${plan === undefined ? '' : ` as uid ${plan.uid}`}) ${how}${detail} (are user namespaces allowed?)`,
        });
      }
    });
  });
}
