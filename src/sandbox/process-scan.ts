import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/**
 * The degraded containment of `sandbox: none` (SPEC §11): with no PID namespace, the processes an agent
 * left behind are found by looking at every process on the machine. A process belongs to the attempt when
 * it is in the agent's session (the agent was started with `setsid`), or when its working directory or
 * root lies in one of the attempt's directories (a daemon that left the session with its own `setsid`
 * but still works in the workspace). Those are killed, and the scan repeats until a round finds none, so
 * a process forked during a round is caught by the next.
 *
 * What this cannot stop, and why the workspace is then judged twice: a process that left the session
 * and moved its cwd elsewhere before the scan (e.g. `setsid sh -c 'cd /; sleep 1; echo x > $WS/f'`) is
 * invisible here. That is the difference between `none` and `bwrap`.
 */

export interface ScanResult {
  /** Processes signalled, over all rounds. */
  killed: number;
  /** True when the last round found no process of the attempt. */
  settled: boolean;
}

const MAX_ROUNDS = 20;

export function killAttemptProcesses(input: {
  sessionId: number;
  /** Real paths (symlinks resolved) of the attempt's directories: workspace, home, tmp. */
  directories: readonly string[];
  /** Pids never signalled (Witness itself). */
  exclude: readonly number[];
}): ScanResult {
  let killed = 0;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const found = findAttemptProcesses(input);
    if (found.length === 0) return { killed, settled: true };
    for (const pid of found) {
      try {
        process.kill(pid, 'SIGKILL');
        killed++;
      } catch {
        // already gone
      }
    }
  }
  return { killed, settled: findAttemptProcesses(input).length === 0 };
}

export function findAttemptProcesses(input: {
  sessionId: number;
  directories: readonly string[];
  exclude: readonly number[];
}): number[] {
  const found: number[] = [];
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return found;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (input.exclude.includes(pid)) continue;
    const stat = readStat(pid);
    if (stat === undefined || stat.state === 'Z') continue;
    if (stat.session === input.sessionId || livesIn(pid, input.directories)) found.push(pid);
  }
  return found;
}

/**
 * Every live process whose real, effective, saved or file-system uid is `uid` (`/proc/PID/status`): under
 * `sandbox: none` as root, an attempt's agent runs as a uid of its own, so these are the attempt's
 * processes wherever they went (another session, `cd /`, another cgroup).
 */
export function processesOfUid(uid: number): number[] {
  const found: number[] = [];
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return found;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    let status: string;
    try {
      status = readFileSync(`/proc/${name}/status`, 'utf8');
    } catch {
      continue;
    }
    if (/^State:\s+Z/m.test(status)) continue;
    const ids = /^Uid:\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)/m.exec(status);
    if (ids?.slice(1).some((id) => Number(id) === uid)) found.push(Number(name));
  }
  return found;
}

/**
 * The live children of `pid`, found by reading every process's parent (/proc/<pid>/task/<tid>/children
 * is not compiled into every kernel). Meant for a stopped parent, whose children cannot change.
 */
export function childrenOf(pid: number): number[] {
  const children: number[] = [];
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return children;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readStat(Number(name));
    if (stat !== undefined && stat.state !== 'Z' && stat.parent === pid) children.push(Number(name));
  }
  return children;
}

/** The state letter of `pid` (R, S, D, T, Z, ...), undefined when it is gone. */
export function processState(pid: number): string | undefined {
  return readStat(pid)?.state;
}

function readStat(
  pid: number,
): { state: string; parent: number; session: number; startTime: string } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses; the fields after its last ')' do not.
    const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return {
      state: rest[0] ?? '',
      parent: Number(rest[1]),
      session: Number(rest[3]),
      startTime: rest[19] ?? '',
    };
  } catch {
    return undefined;
  }
}

function livesIn(pid: number, directories: readonly string[]): boolean {
  for (const link of ['cwd', 'root']) {
    let target: string;
    try {
      target = readlinkSync(`/proc/${pid}/${link}`);
    } catch {
      continue;
    }
    if (target.endsWith(' (deleted)')) target = target.slice(0, -' (deleted)'.length);
    if (directories.some((directory) => target === directory || target.startsWith(`${directory}/`))) {
      return true;
    }
  }
  return false;
}

/**
 * A process's start time (clock ticks since boot): with the pid, it names one process, so a pid reused by
 * an unrelated process after ours was reaped is never waited for, nor killed.
 */
export function processStartTime(pid: number): string | undefined {
  return readStat(pid)?.startTime;
}

/**
 * True when the process that had `startTime` is gone or a zombie (a zombie PID-namespace init has already
 * emptied its namespace: the kernel kills and reaps every member before the init becomes a zombie).
 */
export function processGone(pid: number, startTime: string): boolean {
  const stat = readStat(pid);
  return stat === undefined || stat.startTime !== startTime || stat.state === 'Z' || stat.state === 'X';
}
