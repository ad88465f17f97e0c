/**
 * The bubblewrap command line for one contained process (SPEC §11). A pure function of the plan, so the
 * layout can be read and tested without running anything. Mount order matters: later mounts cover
 * earlier ones, so the read-only host comes first, then hidden and shown directories (ancestors first),
 * then hidden files, then what is writable.
 *
 * What each piece stops:
 * - `--unshare-pid` + `--die-with-parent`: the agent and everything it starts (a `setsid` daemon included)
 *   live in their own PID namespace whose init is bubblewrap's. When the agent exits, or Witness kills the
 *   sandbox, the namespace's init dies and the kernel kills every process in it, so no daemon can write to
 *   this attempt's workspace after it is judged, or to a later attempt's.
 * - `--new-session`: no process in the sandbox can push input into Witness's terminal (TIOCSTI).
 * - `--cap-drop ALL`: when Witness runs as root (CI, containers), bubblewrap otherwise leaves the agent every
 *   capability, and an agent with CAP_SYS_ADMIN undoes the rest of this list from inside: it remounts `/`
 *   writable and writes the host, or unmounts the tmpfs over the operator's home and reads it. With CAP_SYS_TIME
 *   it could also step the clock that change evidence trusts. Run unprivileged, the agent has none anyway.
 * - `/proc/sys` and `/proc/sysrq-trigger` read-only over the fresh `/proc`: bubblewrap covers them only for
 *   an unprivileged caller. Without capabilities, uid 0 still passes the owner check on sysctl files, so a
 *   root-run agent could set host-wide sysctls (`kernel.core_pattern = |/payload` runs the payload as root
 *   on the host at the next crash).
 * - `--ro-bind / /`: the host is read-only; a write to `~/.bashrc` or `/etc` fails inside the sandbox.
 * - `--tmpfs` over each hidden directory (the per-run directory holding every attempt's workspace, the
 *   operator's home) and `/dev/null` over each hidden file (the memory database, its WAL): another
 *   attempt's workspace, the operator's dotfiles and the campaign's stored results are not visible.
 * - `--ro-bind-try` of each shown directory (a program installed in the home, the campaign directory):
 *   the agent can run its own script but not rewrite it for a later attempt; what must stay hidden in it
 *   is covered again after it (see `campaign-directory.ts`).
 * - `--bind-fd`: the workspace and the attempt's home are mounted from the handles Witness holds, not by
 *   path, so an agent that swaps a path for a symlink cannot redirect the mount.
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

export interface BwrapPlan {
  command: string;
  args: readonly string[];
  /** Working directory inside the sandbox (the workspace). */
  cwd: string;
  /** The complete environment of the contained process (already allowlisted). */
  env: Readonly<Record<string, string>>;
  writable: readonly WritableMount[];
  /** Directories replaced by an empty tmpfs (other attempts, the operator's home). */
  hiddenDirectories: readonly string[];
  /** Files replaced by `/dev/null` (the memory database and its side files). */
  hiddenFiles: readonly string[];
  /**
   * Directories shown read-only at their own path: inside hidden ones (the agent's program installed in a
   * home) or over the private `/tmp` (the campaign directory).
   */
  exposedReadOnly?: readonly string[] | undefined;
  network: NetworkMode;
  /** Where bubblewrap writes `{"child-pid": N}`: the namespace's init, watched until it is gone. */
  infoFd?: number | undefined;
  /** bubblewrap waits for a byte on this descriptor before it starts the command. */
  blockFd?: number | undefined;
  /** Host files shown read-only at a path inside (the egress proxy's CA bundle, under the private `/tmp`). */
  readOnlyFiles?: ReadonlyArray<{ source: string; path: string }> | undefined;
}

/**
 * The isolation every sandboxed process gets, and the availability probe checks: own PID, IPC and UTS
 * namespaces, dies with Witness, a new session (no TIOCSTI into the operator's terminal), no capabilities
 * (even when Witness runs as root), the host read-only, fresh /dev, /proc and /tmp.
 */
export const BASE_BWRAP_ARGUMENTS: readonly string[] = Object.freeze([
  '--unshare-pid',
  '--unshare-ipc',
  '--unshare-uts',
  '--die-with-parent',
  '--new-session',
  '--cap-drop',
  'ALL',
  '--ro-bind',
  '/',
  '/',
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
  '--tmpfs',
  '/tmp',
]);

export function bwrapArguments(plan: BwrapPlan): string[] {
  const argv = [...BASE_BWRAP_ARGUMENTS];
  if (plan.network !== 'host') argv.push('--unshare-net');
  for (const mount of directoryMounts(plan)) {
    if (mount.show) argv.push('--ro-bind-try', mount.path, mount.path);
    else argv.push('--tmpfs', mount.path);
  }
  for (const file of plan.hiddenFiles) argv.push('--ro-bind-try', '/dev/null', file);
  for (const file of plan.readOnlyFiles ?? []) argv.push('--ro-bind', file.source, file.path);
  for (const mount of plan.writable) argv.push('--bind-fd', String(mount.childFd), mount.path);
  if (plan.infoFd !== undefined) argv.push('--info-fd', String(plan.infoFd));
  if (plan.blockFd !== undefined) argv.push('--block-fd', String(plan.blockFd));
  argv.push('--chdir', plan.cwd, '--clearenv');
  for (const [name, value] of Object.entries(plan.env).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    argv.push('--setenv', name, value);
  }
  // `--` ends bubblewrap's options: a command named `--bind` is a command, not an option.
  argv.push('--', plan.command, ...plan.args);
  return argv;
}

/**
 * The hidden and shown directories in mount order: a later mount covers an earlier one, so an ancestor
 * always comes before what lies in it (fewer path segments first). A directory shown inside a hidden one
 * (a program under the operator's home, a campaign under `/tmp`) is thus visible, and a directory hidden
 * inside a shown one (the run directory in a campaign directory that holds `TMPDIR`) stays hidden. At one
 * path, hiding wins.
 */
function directoryMounts(plan: BwrapPlan): { path: string; show: boolean }[] {
  const mounts = [
    ...(plan.exposedReadOnly ?? []).map((path) => ({ path, show: true })),
    ...plan.hiddenDirectories.map((path) => ({ path, show: false })),
  ];
  const depth = (path: string) => path.split('/').filter((part) => part !== '').length;
  // Array.prototype.sort is stable: at equal depth, shown (listed first) stays before hidden.
  return mounts.sort((a, b) => depth(a.path) - depth(b.path));
}
