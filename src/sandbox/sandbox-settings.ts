import {
  accessSync,
  closeSync,
  constants,
  existsSync,
  mkdtempSync,
  openSync,
  realpathSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, isAbsolute, join, relative, sep } from 'node:path';
import { ProgramNotFoundError } from '../errors.js';
import { type AttemptEgress, openAttemptNetwork } from '../network/attempt-network.js';
import { removeTree } from '../sources/confined-fs.js';
import { agentEnvironment } from './agent-environment.js';
import type { NetworkMode } from './bwrap-arguments.js';
import {
  type CampaignDirectory,
  campaignDirectoryMounts,
  campaignDirectoryOf,
} from './campaign-directory.js';
import {
  type ContainedProcess,
  type ContainmentChoice,
  type HeldDirectory,
  startContained,
} from './contained-process.js';
import { namespaceListenersAvailable } from './network-namespace.js';
import { detectSandbox, sandboxUnavailableError } from './sandbox-availability.js';
import type { SandboxMode } from './sandbox-modes.js';

/**
 * How a campaign's out-of-process agents are contained, resolved once per run (SPEC §11): the sandbox
 * (bubblewrap, or an explicit `none`), the network, the allowlisted environment and what is hidden from
 * the agent (the operator's home, the memory database). {@link launchInAttempt} starts one process of one
 * attempt with them.
 */

export { SANDBOX_MODES, type SandboxMode } from './sandbox-modes.js';

export interface SandboxSettings {
  containment: ContainmentChoice;
  network: NetworkMode;
  /** Witness's environment: only allowlisted names are read from it. */
  hostEnv: Readonly<Record<string, string | undefined>>;
  passEnv: readonly string[];
  env: Readonly<Record<string, string>>;
  /** Directories hidden from the agent besides the run directory (the operator's home). */
  hiddenDirectories: readonly string[];
  /** Files hidden from the agent (the memory database and its side files). */
  hiddenFiles: readonly string[];
  /** The campaign's directory, shown read-only in the sandbox (see `campaign-directory.ts`). */
  campaignDirectory?: CampaignDirectory | undefined;
  drainMs: number;
}

export interface ResolveSandboxInput {
  /** `sandbox:` of the campaign; bubblewrap when absent. */
  mode?: SandboxMode | undefined;
  network?: NetworkMode | undefined;
  hostEnv: Readonly<Record<string, string | undefined>>;
  passEnv?: readonly string[] | undefined;
  env?: Readonly<Record<string, string>> | undefined;
  /** The memory database file, hidden from the agent with its `-wal`, `-shm` and `-journal` files. */
  memoryFile?: string | undefined;
  /**
   * The campaign file: its directory (where the campaign's relative paths resolve) is shown read-only to
   * the agent at the same path, the file itself and the memory in it hidden.
   */
  campaignFile?: string | undefined;
  drainMs?: number | undefined;
  /** What needs the sandbox, for the refusal message (`the command target`). */
  what?: string | undefined;
}

/** Resolves the settings; without `sandbox: none`, a missing sandbox is a {@link SandboxUnavailableError}. */
export async function resolveSandboxSettings(input: ResolveSandboxInput): Promise<SandboxSettings> {
  let containment: ContainmentChoice = { mode: 'none' };
  if (input.mode !== 'none') {
    const availability = await detectSandbox({ searchPath: input.hostEnv.PATH });
    if (!availability.available) {
      throw sandboxUnavailableError(availability.reason, input.what ?? 'an out-of-process agent');
    }
    containment = { mode: 'bwrap', bwrapPath: availability.bwrapPath };
  }
  const network = input.network ?? (containment.mode === 'none' ? 'host' : 'proxy');
  if (containment.mode === 'bwrap' && network === 'proxy') {
    const problem = namespaceListenersAvailable();
    if (problem !== undefined)
      throw sandboxUnavailableError(
        `network: proxy is unavailable: ${problem}`,
        input.what ?? 'an out-of-process agent',
      );
  }
  const operatorHome = input.hostEnv.HOME;
  // A home that does not exist (`HOME=/nonexistent`, the `nobody` user of a CI container) holds nothing
  // to hide, and bubblewrap cannot make a mount point for it on the read-only host: every sandbox failed.
  const hiddenDirectories =
    operatorHome !== undefined && isAbsolute(operatorHome) && operatorHome !== '/' && existsSync(operatorHome)
      ? [operatorHome]
      : [];
  const hiddenFiles =
    input.memoryFile === undefined || !isAbsolute(input.memoryFile)
      ? []
      : memoryNames(input.memoryFile).flatMap((memory) =>
          ['', '-wal', '-shm', '-journal'].map((suffix) => `${memory}${suffix}`),
        );
  return {
    containment,
    network,
    hostEnv: input.hostEnv,
    passEnv: input.passEnv ?? [],
    env: input.env ?? {},
    hiddenDirectories,
    hiddenFiles,
    campaignDirectory: input.campaignFile === undefined ? undefined : campaignDirectoryOf(input.campaignFile),
    drainMs: input.drainMs ?? 1_000,
  };
}

/**
 * The memory file as named and through its real directory: a memory named `/tmp/link/witness.db` is
 * still covered when the campaign directory shows it as `/tmp/real/witness.db`, and the other way round.
 */
function memoryNames(memoryFile: string): string[] {
  try {
    const real = join(realpathSync(dirname(memoryFile)), basename(memoryFile));
    return real === memoryFile ? [memoryFile] : [memoryFile, real];
  } catch {
    return [memoryFile];
  }
}

/** An attempt's held directories, as the attempt pipeline hands them to a target. */
export interface AttemptDirectories {
  workspace: HeldDirectory;
  home: HeldDirectory;
  tmp: HeldDirectory;
  /** The run directory holding every attempt: hidden from the agent. */
  runPath: string;
  /** The attempt's way out under `network: proxy` (SPEC §14): its egress proxy, relays and variables. */
  egress?: AttemptEgress | undefined;
}

export interface LaunchRequest {
  command: string;
  args: readonly string[];
  /** The attempt's workspace path (used when no held directories were given). */
  workspace: string;
  attempt?: AttemptDirectories | undefined;
  /** Extra variables from the target's own configuration. */
  env?: Readonly<Record<string, string>> | undefined;
}

export interface Launched {
  process: ContainedProcess;
  /**
   * Why the campaign directory is not shown in the sandbox, when it is not (it is the operator's home,
   * `/tmp` itself, ...): an agent that then fails to find its script can be explained to the operator.
   */
  campaignDirectoryWithheld?: string | undefined;
  /** Releases what the launch created for itself (a private home when the caller gave none). */
  release(): void;
}

/**
 * Starts `command` for one attempt inside the settings' containment. Without held directories (a target
 * used outside a campaign), the workspace path is opened here and a private home is created, then removed
 * by `release()`.
 */
export function launchInAttempt(settings: SandboxSettings, request: LaunchRequest): Launched {
  // A program that does not exist is a start failure, told apart from the program failing (bubblewrap
  // would only exit 1 with a message).
  const searchPath =
    request.env?.PATH ?? settings.env.PATH ?? settings.hostEnv.PATH ?? '/usr/local/bin:/usr/bin:/bin';
  if (findProgram(request.command, searchPath) === undefined) {
    throw new ProgramNotFoundError(request.command, searchPath);
  }
  const owned: number[] = [];
  let ownHome: string | undefined;
  let attempt = request.attempt;
  if (attempt === undefined) {
    const workspaceFd = openSync(request.workspace, constants.O_RDONLY | constants.O_DIRECTORY);
    owned.push(workspaceFd);
    ownHome = realpathSync(mkdtempSync(join(tmpdir(), 'witness-home-')));
    const homeFd = openSync(ownHome, constants.O_RDONLY | constants.O_DIRECTORY);
    owned.push(homeFd);
    const home = { path: ownHome, fd: homeFd };
    attempt = {
      workspace: { path: realpathSync(request.workspace), fd: workspaceFd },
      home,
      tmp: home,
      runPath: ownHome,
    };
  }
  const bwrap = settings.containment.mode === 'bwrap';
  // Under network: proxy the agent's only way out is an egress proxy: the attempt's, or (a target used
  // outside a campaign) one of the launch's own, whose evidence nobody reads.
  let ownNetwork: ReturnType<typeof openAttemptNetwork> | undefined;
  let egress = attempt.egress;
  if (bwrap && settings.network === 'proxy' && egress === undefined) {
    ownNetwork = openAttemptNetwork({ settings: { mode: 'proxy', allow: [], intercept: false } });
    egress = ownNetwork.egress;
  }
  const env = {
    ...agentEnvironment({
      hostEnv: settings.hostEnv,
      passEnv: settings.passEnv,
      env: { ...settings.env, ...request.env },
      home: attempt.home.path,
      tmp: bwrap ? '/tmp' : attempt.tmp.path,
    }),
    // The proxy variables win over the campaign's: any other proxy is out of reach anyway.
    ...(bwrap && settings.network === 'proxy' ? (egress?.environment() ?? {}) : {}),
  };
  const campaign =
    bwrap && settings.campaignDirectory !== undefined
      ? campaignDirectoryMounts({
          directory: settings.campaignDirectory,
          hiddenDirectories: settings.hiddenDirectories.map(realOrSelf),
          runPath: attempt.runPath,
          hiddenFiles: settings.hiddenFiles,
          privateTmp: true,
        })
      : undefined;
  const shown = campaign?.shown === true ? campaign : undefined;
  // Mount order (ancestors first) is `bwrapArguments`'s concern; here only what is hidden and shown.
  // The directory run directories are made in (TMPDIR, a worker's directory) holds other runs' attempts
  // too — a concurrent `witness run`, a worker's other runs — whose workspaces the agent could otherwise
  // read when it is not `/tmp` (replaced anyway): it is hidden like the run directory.
  const runParent = dirname(attempt.runPath);
  const runsHidden = runParent === '/' || runParent === '/tmp' ? [] : [runParent];
  const hiddenDirectories = [
    ...new Set([
      ...settings.hiddenDirectories,
      ...runsHidden,
      attempt.runPath,
      ...(shown?.hiddenDirectories ?? []),
    ]),
  ];
  const process = startContained({
    containment: settings.containment,
    command: request.command,
    args: request.args,
    workspace: attempt.workspace,
    home: attempt.home,
    tmp: attempt.tmp,
    env,
    network: settings.network,
    namespaceListeners: bwrap && settings.network === 'proxy' ? (egress?.listeners() ?? []) : [],
    readOnlyFiles: bwrap && settings.network === 'proxy' ? (egress?.readOnlyFiles() ?? []) : [],
    hiddenDirectories,
    hiddenFiles: [...new Set([...settings.hiddenFiles, ...(shown?.hiddenFiles ?? [])])],
    // Under bubblewrap `/tmp` is a fresh tmpfs too, so a program installed there (an agent CLI put in a
    // scratch prefix by CI) is shown the same way as one in the operator's home.
    exposedReadOnly: [
      ...programDirectories(
        env.PATH ?? '',
        request.command,
        bwrap ? [...settings.hiddenDirectories, ...runsHidden, '/tmp'] : settings.hiddenDirectories,
      ),
      ...(shown === undefined ? [] : [shown.path]),
    ].filter((path, index, all) => all.indexOf(path) === index),
    drainMs: settings.drainMs,
  });
  return {
    process,
    ...(campaign?.shown === false
      ? {
          campaignDirectoryWithheld:
            `the campaign directory ${campaign.path} is not shown in the sandbox (${campaign.reason}); ` +
            'to let the agent use files beside the campaign, move them into a directory of their own',
        }
      : {}),
    release() {
      void ownNetwork?.close();
      for (const fd of owned.splice(0)) closeSync(fd);
      if (ownHome !== undefined) removeTree(ownHome);
    },
  };
}

function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function findProgram(command: string, searchPath: string): string | undefined {
  const candidates = command.includes('/')
    ? [command]
    : searchPath
        .split(':')
        .filter((directory) => isAbsolute(directory))
        .map((directory) => join(directory, command));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * Agents are often installed under the operator's home (`~/.local/bin`, `~/.nvm`) or a scratch prefix in
 * `/tmp`: the top-level entry of each PATH directory, and of an absolute command, that lies in a hidden
 * directory is shown read-only, so
 * the program still runs while the rest of the home (dotfiles, keys, other agents' state) stays hidden.
 */
function programDirectories(path: string, command: string, hidden: readonly string[]): string[] {
  const candidates = [...path.split(':'), ...(isAbsolute(command) ? [dirname(command)] : [])];
  const exposed = new Set<string>();
  for (const candidate of candidates) {
    if (!isAbsolute(candidate)) continue;
    for (const directory of hidden) {
      const rel = relative(directory, candidate);
      if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) continue;
      exposed.add(join(directory, rel.split(sep)[0] as string));
    }
  }
  return [...exposed].sort();
}
