import { dirname } from 'node:path';

/**
 * The bubblewrap command line for one contained process (SPEC §11, §13). A pure function of the plan, so
 * the layout can be read and tested without running anything. It is built in sections, each its own
 * function, in the order bubblewrap must see them (later mounts cover earlier ones):
 *
 *   isolation → system view → network → host paths shown → hidden files → writable → process → command
 *
 * What each piece stops:
 * - `--unshare-pid` + `--die-with-parent`: the agent and everything it starts (a `setsid` daemon included)
 *   live in their own PID namespace whose init is bubblewrap's. When the agent exits, or Witness kills the
 *   sandbox, the namespace's init dies and the kernel kills every process in it, so no daemon can write to
 *   this attempt's workspace after it is judged, or to a later attempt's.
 * - `--new-session`: no process in the sandbox can push input into Witness's terminal (TIOCSTI).
 * - `--cap-drop ALL`: when Witness runs as root (CI, containers), bubblewrap otherwise leaves the agent every
 *   capability, and an agent with CAP_SYS_ADMIN undoes the rest of this list from inside: it remounts a
 *   read-only mount writable, or unmounts what covers a hidden file. With CAP_SYS_TIME it could also step
 *   the clock that change evidence trusts.
 * - **The agent's own user** (`agentUser`, when Witness is root): bubblewrap keeps only CAP_SETUID,
 *   CAP_SETGID and CAP_SETPCAP, and the command is `setpriv`, which becomes that unprivileged host user
 *   (no supplementary groups, empty bounding set) before it executes the agent. Without it the agent was
 *   uid 0 without capabilities — still the owner of every root-owned file: it read `/etc/shadow` and
 *   connected to root-only unix sockets. (uid 0 mapped into a user namespace would keep that access.)
 * - **The system view**: the system directories (`/usr`, `/bin`, `/sbin`, `/lib*`, `/etc`, `/opt`)
 *   read-only, a fresh `/dev` and `/proc` with `/proc/sys` and `/proc/sysrq-trigger` read-only (bubblewrap
 *   covers them only for an unprivileged caller, and uid 0 without capabilities could still set
 *   `kernel.core_pattern = |/payload`), and a private `/tmp` (mode 1777). Nothing else of the host: no
 *   `/home`, `/root`, `/work`, `/srv`, `/var`, `/run` — before, the whole host was shown read-only and the
 *   agent read another project's `.env` and another campaign's `witness.db`.
 * - **Host paths shown** (`host-view.ts`: the campaign directory, the program's install directory, the
 *   PATH entries): each bound read-only at its own path under synthetic parents (empty directories made
 *   here, mode 0755, read-only once `/` is remounted), never an ancestor. What must stay hidden inside a
 *   shown path is covered again: directories by an empty tmpfs (ancestors first, so what is hidden inside
 *   a shown directory stays hidden), files by `/dev/null` (the memory database, the campaign file).
 * - `--bind-fd`: the workspace and the attempt's home are mounted from the handles Witness holds, not by
 *   path, so an agent that swaps a path for a symlink cannot redirect the mount.
 * - `--remount-ro /`: the synthetic root bubblewrap builds on is read-only (an agent cannot plant a
 *   file at `/etc`-like paths of its own making, nor in the synthetic parents).
 * - `--seccomp`: the keyring calls (`add_key`, `keyctl`, `request_key`) fail (seccomp-filter.ts): every
 *   process inherits the session keyring of Witness, and a possessed keyring's keys are readable whatever
 *   the uid.
 * - `--clearenv` + `--setenv`: the agent sees only the allowlisted environment (no API keys it was not
 *   given, no `WITNESS_DB`).
 * - `--unshare-net` (`network: proxy` and `none`, SPEC §14): the sandbox's own network namespace, with only
 *   its own loopback: no route out, and none of the host's loopback services (the viewer, the model
 *   server, a database) in reach. Under `proxy` the command is held (`--block-fd`) until Witness has
 *   opened the egress proxy's listeners on that loopback (network-namespace.ts).
 */

export { NETWORK_MODES, type NetworkMode } from '../models/vocabulary.js';

import type { NetworkMode } from '../models/vocabulary.js';

/** A directory mounted writable in the sandbox: where it appears, and the fd number the child inherits. */
export interface WritableMount {
  /** Absolute path inside the sandbox (the same path as outside, so `{workspace}` means one thing). */
  path: string;
  /** The descriptor number in bubblewrap's own table (3, 4, ... from the spawn's extra stdio slots). */
  childFd: number;
}

/** A system directory as the host has it: a real directory, or a link to one (`/bin -> usr/bin`). */
export type SystemEntry =
  | { path: string; kind: 'directory' }
  | { path: string; kind: 'symlink'; target: string };

/** The unprivileged host user the agent runs as when Witness is root, and the program that becomes it. */
export interface AgentUserPlan {
  uid: number;
  gid: number;
  /** `setpriv` (util-linux), which drops to the user before executing the agent. */
  setprivPath: string;
}

export interface BwrapPlan {
  command: string;
  args: readonly string[];
  /** Working directory inside the sandbox (the workspace). */
  cwd: string;
  /** The complete environment of the contained process (already allowlisted). */
  env: Readonly<Record<string, string>>;
  /** The system directories, shown read-only at their own path. */
  system: readonly SystemEntry[];
  /** Host paths (directories or files) shown read-only at their own path (see `host-view.ts`). */
  shown: readonly string[];
  /** Directories inside shown ones covered again by an empty tmpfs. */
  hiddenDirectories: readonly string[];
  /** Files inside shown ones covered by `/dev/null` (the memory database and its side files). */
  hiddenFiles: readonly string[];
  writable: readonly WritableMount[];
  network: NetworkMode;
  /** When Witness is root: the unprivileged host user the agent becomes. */
  agentUser?: AgentUserPlan | undefined;
  /** Where bubblewrap writes `{"child-pid": N}`: the namespace's init, watched until it is gone. */
  infoFd?: number | undefined;
  /** bubblewrap waits for a byte on this descriptor before it starts the command. */
  blockFd?: number | undefined;
  /** Host files shown read-only at a path inside (the egress proxy's CA bundle, under the private `/tmp`). */
  readOnlyFiles?: ReadonlyArray<{ source: string; path: string }> | undefined;
  /** A compiled seccomp filter bubblewrap loads before executing the command. */
  seccompFd?: number | undefined;
}

/**
 * The isolation every sandboxed process gets: own PID, IPC and UTS namespaces, dies with Witness, a new
 * session (no TIOCSTI into the operator's terminal), no capabilities — or, when it must become the agent's
 * own user, only the three `setpriv` needs to do so (it drops them, and every other, before the agent).
 */
export function isolationArguments(agentUser?: AgentUserPlan): string[] {
  const keep = agentUser === undefined ? [] : ['CAP_SETUID', 'CAP_SETGID', 'CAP_SETPCAP'];
  return [
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
    ...keep.flatMap((cap) => ['--cap-add', cap]),
  ];
}

/** The system directories read-only, fresh `/dev` and `/proc` (its sysctls read-only), a private `/tmp`. */
export function systemViewArguments(system: readonly SystemEntry[]): string[] {
  const argv: string[] = [];
  for (const entry of system) {
    if (entry.kind === 'symlink') argv.push('--symlink', entry.target, entry.path);
    else argv.push('--ro-bind', entry.path, entry.path);
  }
  argv.push(
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    '--ro-bind',
    '/proc/sys',
    '/proc/sys',
    '--ro-bind-try',
    '/proc/sysrq-trigger',
    '/proc/sysrq-trigger',
    '--perms',
    '1777',
    '--tmpfs',
    '/tmp',
  );
  return argv;
}

/** `proxy` and `none`: the sandbox's own network namespace (see the list above). */
export function networkArguments(network: NetworkMode): string[] {
  return network === 'host' ? [] : ['--unshare-net'];
}

export function bwrapArguments(plan: BwrapPlan): string[] {
  const parents = new SyntheticParents(plan.system);
  const argv = [
    ...isolationArguments(plan.agentUser),
    ...systemViewArguments(plan.system),
    ...networkArguments(plan.network),
  ];
  for (const mount of directoryMounts(plan)) {
    if (mount.show) argv.push(...parents.bound(mount.path), '--ro-bind', mount.path, mount.path);
    else {
      parents.emptied(mount.path);
      argv.push('--tmpfs', mount.path);
    }
  }
  for (const file of plan.hiddenFiles) argv.push('--ro-bind-try', '/dev/null', file);
  for (const file of plan.readOnlyFiles ?? []) {
    argv.push(...parents.bound(file.path), '--ro-bind', file.source, file.path);
  }
  for (const mount of plan.writable) {
    argv.push(...parents.bound(mount.path), '--bind-fd', String(mount.childFd), mount.path);
  }
  argv.push('--remount-ro', '/');
  if (plan.infoFd !== undefined) argv.push('--info-fd', String(plan.infoFd));
  if (plan.blockFd !== undefined) argv.push('--block-fd', String(plan.blockFd));
  if (plan.seccompFd !== undefined) argv.push('--seccomp', String(plan.seccompFd));
  argv.push('--chdir', plan.cwd, '--clearenv');
  for (const [name, value] of Object.entries(plan.env).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    argv.push('--setenv', name, value);
  }
  // `--` ends bubblewrap's options: a command named `--bind` is a command, not an option.
  argv.push('--', ...commandLine(plan.agentUser, plan.command, plan.args));
  return argv;
}

/**
 * The command bubblewrap executes: the agent's, or — when the agent must become its own user — `setpriv`
 * with the user, then the agent's. `setpriv` sets the groups to none, the real, effective and saved ids to
 * the user's, and empties the inheritable and bounding sets; the uid change itself clears the permitted and
 * effective capabilities, and bubblewrap's `no_new_privs` keeps a set-uid program from raising them again.
 */
export function commandLine(
  user: AgentUserPlan | undefined,
  command: string,
  args: readonly string[],
  options: { noNewPrivs?: boolean } = {},
): string[] {
  if (user === undefined) return [command, ...args];
  return [
    user.setprivPath,
    `--reuid=${user.uid}`,
    `--regid=${user.gid}`,
    '--clear-groups',
    '--inh-caps=-all',
    '--bounding-set=-all',
    // Without bubblewrap (which sets it itself), no set-uid program may hand root back.
    ...(options.noNewPrivs === true ? ['--no-new-privs'] : []),
    '--',
    command,
    ...args,
  ];
}

/**
 * The hidden and shown directories in mount order: a later mount covers an earlier one, so an ancestor
 * always comes before what lies in it (fewer path segments first). A directory hidden inside a shown one
 * (the run directory in a campaign directory that holds `TMPDIR`) thus stays hidden. At one path, hiding
 * wins.
 */
function directoryMounts(plan: BwrapPlan): { path: string; show: boolean }[] {
  const mounts = [
    ...plan.shown.map((path) => ({ path, show: true })),
    ...plan.hiddenDirectories.map((path) => ({ path, show: false })),
  ];
  // Array.prototype.sort is stable: at equal depth, shown (listed first) stays before hidden.
  return mounts.sort((a, b) => depth(a.path) - depth(b.path));
}

function depth(path: string): number {
  return path.split('/').filter((part) => part !== '').length;
}

/**
 * The empty directories a mount point needs on bubblewrap's root: every ancestor not there yet — not a
 * system directory, not inside a host path already bound, not one made before. Made mode 0755 (bubblewrap
 * would make them 0700, which an agent running as its own user could not cross), read-only once `/` is
 * remounted. Beneath an empty tmpfs (`/tmp`, a hidden directory) nothing is there but what is made here.
 */
class SyntheticParents {
  /** Directories present: made here, tmpfs mount points, the fixed ones. */
  readonly #present = new Set<string>(['/', '/tmp', '/dev', '/proc']);
  /** Host trees bound here: everything beneath them is present as on the host. */
  readonly #hostTrees = new Set<string>();
  /** Empty tmpfs mounts: nothing beneath them but what is made here. */
  readonly #emptied = new Set<string>(['/tmp']);

  constructor(system: readonly SystemEntry[]) {
    for (const entry of system) {
      if (entry.kind === 'directory') this.#hostTrees.add(entry.path);
      else this.#present.add(entry.path);
    }
  }

  /** The `--dir` operations `path`'s mount point needs; `path` is then bound from the host. */
  bound(path: string): string[] {
    const argv = this.#make(dirname(path));
    this.#hostTrees.add(path);
    return argv;
  }

  /** `path` is covered by an empty tmpfs (it lies in a bound host tree, so it is present). */
  emptied(path: string): void {
    this.#present.add(path);
    this.#emptied.add(path);
  }

  /** The `--dir` operations that make `directory` and its missing ancestors, ancestors first. */
  #make(directory: string): string[] {
    const missing: string[] = [];
    for (let at = directory; !this.#exists(at); at = dirname(at)) missing.unshift(at);
    for (const made of missing) this.#present.add(made);
    return missing.flatMap((made) => ['--perms', '0755', '--dir', made]);
  }

  #exists(path: string): boolean {
    if (this.#present.has(path)) return true;
    for (let at = path; at !== '/'; at = dirname(at)) {
      if (at !== path && this.#emptied.has(at)) return false;
      if (this.#hostTrees.has(at)) return true;
    }
    return false;
  }
}
