import { closeSync, constants, existsSync, mkdtempSync, openSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { InvalidOptionError, ProgramNotFoundError, SandboxUnavailableError } from '../errors.js';
import { type AttemptEgress, openAttemptNetwork } from '../network/attempt-network.js';
import { removeTree } from '../sources/confined-fs.js';
import { agentAccessProblem, directorySearchProblem } from './agent-access.js';
import { agentEnvironment } from './agent-environment.js';
import { DEFAULT_UID_POOL, type UidPool } from './agent-uid-pool.js';
import { type AgentUser, agentUserOf, type RunAs, runAsUids, runningAsRoot } from './agent-user.js';
import { type CgroupSupport, cgroupSupport } from './attempt-cgroup.js';
import { handOverAttempt, ownedBy } from './attempt-ownership.js';
import { attemptUser, leasedUser, releaseAttemptUser } from './attempt-uids.js';
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
import { findProgram, hostView } from './host-view.js';
import { namespaceListenersAvailable } from './network-namespace.js';
import { detectSandbox, findSetpriv, sandboxUnavailableError } from './sandbox-availability.js';
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
  /**
   * Under bubblewrap when Witness runs as root: the unprivileged host user the agent runs as (SPEC §13),
   * its attempt's directories handed over to it. Absent otherwise (the agent is Witness's own user).
   */
  agentUser?: AgentUser | undefined;
  /**
   * `sandbox: none` when Witness runs as root: the uids from which each attempt's agent takes one of its
   * own (`attempt-uids.ts`), its directories handed over to it. Absent otherwise.
   */
  uidPool?: UidPool | undefined;
  /**
   * `sandbox: none` where cgroup v2 can be written: the cgroup under which each attempt gets one of its
   * own (`attempt-cgroup.ts`).
   */
  cgroupParent?: string | undefined;
  /** What a run must say once, before its attempts (`sandbox: none` is not containment). */
  warnings?: readonly string[] | undefined;
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
  /**
   * `runAs:` of the campaign: the agent's user when Witness runs as root (65534 when absent); under
   * `sandbox: none` the uids its attempts take one each of (a default pool when absent).
   */
  runAs?: RunAs | undefined;
  /** Whether Witness runs as root; the process's own user tells when absent. */
  runningAsRoot?: boolean | undefined;
  /** `sandbox: none`: give each attempt a cgroup of its own where cgroup v2 allows (default true). */
  attemptCgroups?: boolean | undefined;
  /** What needs the sandbox, for the refusal message (`the command target`). */
  what?: string | undefined;
}

/** Resolves the settings; without `sandbox: none`, a missing sandbox is a {@link SandboxUnavailableError}. */
export async function resolveSandboxSettings(input: ResolveSandboxInput): Promise<SandboxSettings> {
  let containment: ContainmentChoice = { mode: 'none' };
  let agentUser: AgentUser | undefined;
  let uidPool: UidPool | undefined;
  const asRoot = input.runningAsRoot ?? runningAsRoot();
  if (input.mode === 'none' && asRoot) {
    // Root's agents never run as root: without a sandbox, each attempt's agent is a uid of its own.
    uidPool = uidPoolOf(input.runAs);
    const setprivPath = findSetpriv();
    if (setprivPath === undefined) {
      throw new SandboxUnavailableError(
        'Witness runs as root, so under sandbox: none each attempt runs as an unprivileged uid of its own, ' +
          'which needs `setpriv` (util-linux; Debian/Ubuntu: `apt-get install util-linux`), and it was not found',
      );
    }
    containment = { mode: 'none', setprivPath };
  }
  if (input.mode !== 'none') {
    // Root's agents never run as root: in the sandbox they become an unprivileged host user.
    agentUser = asRoot ? agentUserOf(input.runAs) : undefined;
    const availability = await detectSandbox({ searchPath: input.hostEnv.PATH, agentUser });
    if (!availability.available) {
      throw sandboxUnavailableError(availability.reason, input.what ?? 'an out-of-process agent');
    }
    containment = {
      mode: 'bwrap',
      bwrapPath: availability.bwrapPath,
      ...(availability.setprivPath === undefined ? {} : { setprivPath: availability.setprivPath }),
    };
  }
  const uncontained =
    input.mode === 'none'
      ? uncontainedAttempts(input.attemptCgroups === false ? undefined : cgroupSupport(), uidPool)
      : {};
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
    ...(agentUser === undefined ? {} : { agentUser }),
    ...(uidPool === undefined ? {} : { uidPool }),
    ...uncontained,
    drainMs: input.drainMs ?? 1_000,
  };
}

/** The uids `runAs:` names for `sandbox: none`, or the default pool. */
function uidPoolOf(runAs: RunAs | undefined): UidPool {
  const uids = runAsUids(runAs);
  if (uids === undefined) return DEFAULT_UID_POOL;
  const what = uids.first === uids.last ? `uid ${uids.first}` : `uids ${uids.first}-${uids.last}`;
  return { ...uids, skipAccounts: false, source: `the ${what} of runAs:` };
}

/**
 * `sandbox: none`: a cgroup per attempt where one can be made, and the one warning the run gives. As
 * root's agent (a uid of its own per attempt) the agent cannot write a cgroup of root's, nor reach another
 * attempt's files or processes, and every process running as its uid is killed at the end; as Witness's
 * own user it can do all of that.
 */
function uncontainedAttempts(
  cgroups: CgroupSupport | undefined,
  uids: UidPool | undefined,
): { cgroupParent?: string; warnings: string[] } {
  const advice = 'Use the sandbox (bubblewrap) for agents you do not trust.';
  const cgroupParent = cgroups?.available === true ? { cgroupParent: cgroups.parent } : {};
  if (uids !== undefined) {
    const kill =
      cgroups?.available === true
        ? 'its cgroup and every process running as its uid are killed when it ends'
        : `every process running as its uid is killed when it ends (no cgroup here: ${cgroups === undefined ? 'turned off' : cgroups.reason})`;
    return {
      ...cgroupParent,
      warnings: [
        'sandbox: none is not containment: each attempt runs as an unprivileged uid of its own, which ' +
          `cannot read root's files nor reach another attempt's, and ${kill}; but the agent reads every ` +
          "host file and reaches every host service any user can, shares the host's network (nothing it " +
          `sends is recorded), and can leave files in shared places (/tmp, /dev/shm). ${advice}`,
      ],
    };
  }
  if (cgroups?.available === true) {
    return {
      ...cgroupParent,
      warnings: [
        "sandbox: none is not containment: each attempt's processes are killed with its cgroup when it " +
          "ends, but the agent runs as Witness's own user, reads and writes whatever that user can, and " +
          "can move a process out of its cgroup to survive the attempt and fake this attempt's verdict " +
          `or a later one's. ${advice}`,
      ],
    };
  }
  const why = cgroups === undefined ? 'turned off' : cgroups.reason;
  return {
    warnings: [
      `sandbox: none is not containment, and no cgroup can hold each attempt here (${why}): a process ` +
        "that leaves the agent's session and workspace (setsid, cd /) survives its attempt, and can fake " +
        `this attempt's verdict or a later one's. ${advice} Or run Witness where cgroup v2 can be written.`,
    ],
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
  /** Scripts the target's configuration names (absolute paths; never prompt text): their package is shown. */
  programFiles?: readonly string[] | undefined;
}

export interface Launched {
  process: ContainedProcess;
  /** Host paths shown to the agent read-only besides the system directories. */
  shownPaths: string[];
  /**
   * Why the campaign directory is not shown in the sandbox, when it is not (it is the operator's home,
   * `/tmp` itself, ...): an agent that then fails to find its script can be explained to the operator.
   */
  campaignDirectoryWithheld?: string | undefined;
  /** Releases what the launch created for itself (a private home when the caller gave none). */
  release(): void;
}

/**
 * Readies an attempt for its agent before the attempt's baseline (SPEC §13): when the agent runs as a user
 * of its own, the attempt's directories become that user's.
 */
export function handOverToAgent(settings: SandboxSettings, attempt: AttemptDirectories): void {
  const pool = settings.uidPool;
  const user = pool === undefined ? settings.agentUser : attemptUser(pool, attempt.workspace);
  if (user === undefined || (ownedBy(attempt.workspace, user) && ownedBy(attempt.home, user))) return;
  handOverAttempt(attempt, user, pool !== undefined);
}

/**
 * Frees what {@link handOverToAgent} took for the attempt (under `sandbox: none` as root, its uid, every
 * process still running as it killed). Call it once the attempt's workspace is judged; a lease never
 * freed is freed when its workspace's handle closes and another attempt takes a uid.
 */
export function releaseAgent(attempt: AttemptDirectories): void {
  releaseAttemptUser(attempt.workspace);
}

/** The user the agent of the attempt runs as: its own uid under `sandbox: none` as root. */
function agentUserIn(settings: SandboxSettings, attempt: AttemptDirectories): AgentUser | undefined {
  return settings.uidPool === undefined ? settings.agentUser : leasedUser(attempt.workspace);
}

/** The user whose access decides what the agent can run: under `sandbox: none` any uid of the pool. */
function accessUser(settings: SandboxSettings): AgentUser | undefined {
  const pool = settings.uidPool;
  return pool === undefined ? settings.agentUser : { uid: pool.first, gid: pool.first };
}

/**
 * Refuses a target whose program the agent's own user could not run (`agent-access.ts`): an
 * {@link InvalidOptionError} naming the path and the fix, before any attempt. `runPath` is the run
 * directory when one exists (a placeholder in the temp directory before the run).
 */
export function refuseUnreachableProgram(
  settings: SandboxSettings,
  request: Omit<HostViewRequest, 'runPath'> & { runPath?: string | undefined },
): void {
  const user = accessUser(settings);
  if (user === undefined) return;
  const runPath = request.runPath ?? join(tmpdir(), 'witness-run-preflight');
  const bwrap = settings.containment.mode === 'bwrap';
  const problem =
    agentAccessProblem({
      user,
      command: request.command,
      searchPath: agentSearchPath(settings, request.env),
      programFiles: request.programFiles,
      // Without bubblewrap the agent meets the host's own directories from `/`.
      shown: bwrap ? attemptHostView(settings, { ...request, runPath }).shown : undefined,
    }) ?? (bwrap ? undefined : runDirectoryProblem(user, runPath));
  if (problem !== undefined) throw new InvalidOptionError(problem);
}

/**
 * Under `sandbox: none` the agent reaches its workspace, home and tmp by their host paths: every directory
 * above the run directory must be searchable by its uid (the run directory itself is opened for it).
 */
function runDirectoryProblem(user: AgentUser, runPath: string): string | undefined {
  const parent = dirname(runPath);
  if (!existsSync(parent)) return undefined;
  const problem = directorySearchProblem(user, parent);
  return problem === undefined
    ? undefined
    : `${problem}; it holds the attempts' workspaces (run directories are made in ${parent}): set TMPDIR ` +
        'to a directory every user can search, such as /tmp';
}

/** What a launch shows of the host, decided before it starts (see `host-view.ts`). */
export interface AttemptHostView {
  /** Host paths shown read-only besides the system directories (empty without bubblewrap). */
  shown: string[];
  hiddenDirectories: string[];
  hiddenFiles: string[];
  /** Why the campaign directory is not shown, when it is not. */
  campaignDirectoryWithheld?: string | undefined;
  /** Paths the launch would have needed but that are never shown, and why (for the preflight). */
  withheld: Array<{ path: string; reason: string }>;
}

export interface HostViewRequest {
  command: string;
  /** Scripts the target's configuration names (absolute paths; never prompt text). */
  programFiles?: readonly string[] | undefined;
  /** Extra variables from the target's own configuration (its `PATH`, if any, is the agent's). */
  env?: Readonly<Record<string, string>> | undefined;
  /** The run directory holding every attempt (hidden). */
  runPath: string;
}

/**
 * What the agent of one launch will see of the host besides the system directories (SPEC §13). Without
 * bubblewrap (`sandbox: none`) the agent sees the whole host, and nothing is listed.
 */
export function attemptHostView(settings: SandboxSettings, request: HostViewRequest): AttemptHostView {
  if (settings.containment.mode !== 'bwrap')
    return { shown: [], hiddenDirectories: [], hiddenFiles: [], withheld: [] };
  const operatorHomes = settings.hiddenDirectories.map(realOrSelf);
  const campaignFile = settings.campaignDirectory?.campaignFile;
  const campaign =
    settings.campaignDirectory === undefined
      ? undefined
      : campaignDirectoryMounts({
          directory: settings.campaignDirectory,
          hiddenDirectories: operatorHomes,
          runPath: request.runPath,
          hiddenFiles: settings.hiddenFiles,
          privateTmp: true,
        });
  const view = hostView({
    command: request.command,
    searchPath: agentSearchPath(settings, request.env),
    programFiles: request.programFiles,
    campaign,
    hiddenDirectories: operatorHomes,
    runPath: request.runPath,
    hiddenFiles: [...settings.hiddenFiles, ...(campaignFile === undefined ? [] : [campaignFile])],
  });
  return {
    shown: view.shown,
    hiddenDirectories: view.hiddenDirectories,
    hiddenFiles: view.hiddenFiles,
    withheld: view.withheld,
    ...(campaign?.shown === false
      ? {
          campaignDirectoryWithheld:
            `the campaign directory ${campaign.path} is not shown in the sandbox (${campaign.reason}); ` +
            'to let the agent use files beside the campaign, move them into a directory of their own',
        }
      : {}),
  };
}

/** The PATH the agent gets: the target's own, the campaign's `env:`, Witness's, or a standard one. */
function agentSearchPath(
  settings: SandboxSettings,
  env: Readonly<Record<string, string>> | undefined,
): string {
  return env?.PATH ?? settings.env.PATH ?? settings.hostEnv.PATH ?? '/usr/local/bin:/usr/bin:/bin';
}

/**
 * Starts `command` for one attempt inside the settings' containment. Without held directories (a target
 * used outside a campaign), the workspace path is opened here and a private home is created, then removed
 * by `release()`.
 */
export function launchInAttempt(settings: SandboxSettings, request: LaunchRequest): Launched {
  // A program that does not exist is a start failure, told apart from the program failing (bubblewrap
  // would only exit 1 with a message).
  const searchPath = agentSearchPath(settings, request.env);
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
  const view = attemptHostView(settings, {
    command: request.command,
    programFiles: request.programFiles,
    env: request.env,
    runPath: attempt.runPath,
  });
  // A target used outside a campaign (or one that did not prepare the attempt) hands it over here.
  handOverToAgent(settings, attempt);
  const ownAttempt = request.attempt === undefined ? attempt : undefined;
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
    agentUser: agentUserIn(settings, attempt),
    cgroupParent: bwrap ? undefined : settings.cgroupParent,
    shown: view.shown,
    hiddenDirectories: view.hiddenDirectories,
    hiddenFiles: view.hiddenFiles,
    drainMs: settings.drainMs,
  });
  return {
    process,
    shownPaths: view.shown,
    ...(view.campaignDirectoryWithheld === undefined
      ? {}
      : { campaignDirectoryWithheld: view.campaignDirectoryWithheld }),
    release() {
      if (ownAttempt !== undefined) releaseAgent(ownAttempt);
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
