import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * A cgroup (v2) of its own for one attempt run with `sandbox: none` (SPEC §13). Without a sandbox there
 * is no PID namespace whose end kills everything: a daemon that left the agent's session (`setsid`) and
 * its workspace (`cd /`) escaped the session kill and the working-directory scan, survived the attempt,
 * and planted the payload in the next attempts' workspaces (the clean attempts judged `success`, the
 * compromised one `failure`). A process cannot leave its cgroup without write access to another one, and
 * `cgroup.kill` (Linux ≥ 5.14) kills every process in it at once, children born meanwhile included.
 *
 * The agent is put in its cgroup before it runs anything: it is started through a `sh` that waits on a
 * pipe until Witness has written its pid into `cgroup.procs`, then executes the agent (same pid).
 *
 * Where no cgroup v2 hierarchy can be written (no cgroup2 mount, a read-only one, no delegation to this
 * user), {@link cgroupSupport} says why, and the run says once that its verdicts can be faked.
 */

export type CgroupSupport = { available: true; parent: string } | { available: false; reason: string };

let support: CgroupSupport | undefined;

/**
 * Whether attempts can have cgroups of their own: the cgroup2 mount, Witness's own cgroup in it, and a
 * child made and removed there as a trial. Decided once per process.
 */
export function cgroupSupport(): CgroupSupport {
  support ??= probe();
  return support;
}

function probe(): CgroupSupport {
  let mount: string | undefined;
  let own: string | undefined;
  try {
    mount = readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .map((line) => line.split(' '))
      .find((fields) => fields[fields.indexOf('-') + 1] === 'cgroup2')?.[4];
    own = readFileSync('/proc/self/cgroup', 'utf8')
      .split('\n')
      .find((line) => line.startsWith('0::'))
      ?.slice(3);
  } catch (error) {
    return { available: false, reason: `the cgroups could not be read (${(error as Error).message})` };
  }
  if (mount === undefined) return { available: false, reason: 'no cgroup v2 hierarchy is mounted' };
  if (own === undefined) return { available: false, reason: 'this process is in no cgroup v2 group' };
  const parent = join(mount, own);
  const trial = join(parent, `witness-probe-${randomUUID().slice(0, 8)}`);
  try {
    mkdirSync(trial);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { available: false, reason: `no cgroup can be made in ${parent} (${code})` };
  }
  const killable = existsSync(join(trial, 'cgroup.kill'));
  rmdirSync(trial);
  if (!killable) return { available: false, reason: 'cgroup.kill is missing (Linux before 5.14)' };
  return { available: true, parent };
}

export interface AttemptCgroup {
  readonly path: string;
  /** Moves a process (the waiting `sh`, before it executes the agent) into the cgroup. */
  join(pid: number): void;
  /**
   * Kills every process in the cgroup and waits, at most `boundMs`, until none is left; true when none
   * is. The cgroup is removed once empty.
   */
  killAll(boundMs: number): Promise<boolean>;
}

/** A new cgroup for one attempt, under Witness's own. */
export function createAttemptCgroup(parent: string): AttemptCgroup {
  const path = join(parent, `witness-attempt-${randomUUID().slice(0, 12)}`);
  mkdirSync(path);
  const populated = () => /^populated 1$/m.test(readFileSync(join(path, 'cgroup.events'), 'utf8'));
  let removed = false;
  return {
    path,
    join(pid) {
      writeFileSync(join(path, 'cgroup.procs'), `${pid}\n`);
    },
    async killAll(boundMs) {
      if (removed) return true;
      const deadline = Date.now() + boundMs;
      for (;;) {
        writeFileSync(join(path, 'cgroup.kill'), '1\n');
        if (!populated()) break;
        if (Date.now() >= deadline) return false;
        await sleep(5);
      }
      try {
        rmdirSync(path);
        removed = true;
      } catch {
        // A process still being torn down: the directory goes with the next call, or stays (empty).
      }
      return true;
    },
  };
}

/**
 * The command line that waits on descriptor 3 until the agent is in its cgroup, then closes it and
 * executes the agent in its place (the pid, and so the session Witness made, stay the agent's).
 */
export function waitingCommand(
  command: string,
  args: readonly string[],
): { command: string; args: string[] } {
  // `&&`: when the gate is closed without a line (the cgroup could not be joined), nothing is executed.
  return { command: '/bin/sh', args: ['-c', 'read -r _ <&3 && exec "$@" 3<&-', 'sh', command, ...args] };
}
