import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { killUid } from './agent-uid-pool.js';
import type { AgentUser } from './agent-user.js';
import { createAttemptCgroup, waitingCommand } from './attempt-cgroup.js';
import { bwrapArguments, commandLine, type NetworkMode } from './bwrap-arguments.js';
import { systemEntries } from './host-view.js';
import {
  type NamespaceRedirection,
  type RedirectionPorts,
  redirectInNamespace,
  redirectionUnavailable,
} from './namespace-redirection.js';
import {
  listenInNamespace,
  type NamespaceEndpoint,
  type NamespaceListenerSpec,
} from './network-namespace.js';
import {
  childrenOf,
  killAttemptProcesses,
  processGone,
  processStartTime,
  processState,
} from './process-scan.js';
import { keyringFilter } from './seccomp-filter.js';

/**
 * One out-of-process agent (a command, an MCP server) with everything it starts, contained for one
 * attempt, and the guarantee the verdict rests on: when {@link ContainedProcess.ended} resolves, every
 * process of the attempt is gone (bwrap), or was searched for and killed (`none`), and its output pipes
 * are closed. Nothing here waits without a bound:
 *
 * - the agent's exit (or {@link ContainedProcess.stop}) ends the sandbox: bubblewrap's PID-namespace init
 *   dies and the kernel kills the rest. Witness then watches that init (its pid comes from `--info-fd`)
 *   until it is gone, at most `reapMs`, killing it directly if it lingers;
 * - output is drained for at most `drainMs` after that and then closed: a process that kept a copy of
 *   stdout (a daemon holding the pipe) can no longer hold up the run — and in a sandbox it is dead anyway.
 */

/** A directory Witness holds open (`O_RDONLY|O_DIRECTORY`) and its path when it was created. */
export interface HeldDirectory {
  path: string;
  fd: number;
}

export type ContainmentChoice =
  | {
      mode: 'bwrap';
      bwrapPath: string;
      /** `setpriv`, found when Witness runs as root: the agent becomes its own user through it. */
      setprivPath?: string | undefined;
    }
  | {
      mode: 'none';
      /** `setpriv`, found when Witness runs as root: each attempt's agent becomes a uid of its own. */
      setprivPath?: string | undefined;
    };

export interface ContainedProcessOptions {
  containment: ContainmentChoice;
  command: string;
  args: readonly string[];
  workspace: HeldDirectory;
  /** The attempt's fresh home (HOME), writable. */
  home: HeldDirectory;
  /** The attempt's private temp directory for `none` (bwrap gives a private tmpfs `/tmp` instead). */
  tmp?: HeldDirectory | undefined;
  /** The complete allowlisted environment (see {@link agentEnvironment}). */
  env: Readonly<Record<string, string>>;
  network?: NetworkMode | undefined;
  /**
   * `network: proxy`: listeners opened on the sandbox's own loopback before the command starts (the egress
   * proxy and model relays); closed when the sandbox ends.
   */
  namespaceListeners?: readonly NamespaceListenerSpec[] | undefined;
  /** Host files shown read-only inside (the egress CA bundle). */
  readOnlyFiles?: ReadonlyArray<{ source: string; path: string }> | undefined;
  /**
   * The unprivileged host user the agent becomes (Witness runs as root), through the containment's
   * `setprivPath`; Witness's own user when absent. Under `none` it is the attempt's own uid
   * (`attempt-uids.ts`): every process still running as it when the agent ends is killed.
   */
  agentUser?: AgentUser | undefined;
  /**
   * Host paths shown read-only besides the system directories (see `host-view.ts`); nothing else of the
   * host is in the sandbox.
   */
  shown?: readonly string[] | undefined;
  /** Directories inside shown paths covered again by an empty tmpfs. */
  hiddenDirectories?: readonly string[] | undefined;
  /** Files inside shown paths covered by `/dev/null`. */
  hiddenFiles?: readonly string[] | undefined;
  /**
   * `none` only: the cgroup (v2) under which the attempt gets a cgroup of its own, every process in it
   * killed at the end (`attempt-cgroup.ts`); without it only the session and the scan end the attempt.
   */
  cgroupParent?: string | undefined;
  /** Bound on draining output after every process is gone. Default 1,000 ms. */
  drainMs?: number | undefined;
  /** Bound on waiting for the sandbox's PID namespace to empty after its leader ended. Default 5,000 ms. */
  reapMs?: number | undefined;
}

export interface ProcessEnd {
  /** The agent's exit status (bwrap passes its command's status through). */
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the program could not be started. */
  spawnError?: string | undefined;
  /** True when every process of the attempt is known to be gone. */
  allGone: boolean;
  /** Output pipes were still open `drainMs` after the processes ended, and were closed. */
  outputCutOff: boolean;
  /** `none` only: processes found by the scan and killed. */
  killedStragglers: number;
}

export interface ContainedProcess {
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly stderr: Readable;
  /** Resolves (never rejects) when every process is gone and the output is closed. */
  readonly ended: Promise<ProcessEnd>;
  /** Kills the agent and everything it started; resolves like {@link ended}. */
  stop(): Promise<ProcessEnd>;
}

const WORKSPACE_FD = 3;
const HOME_FD = 4;
const INFO_FD = 5;
const SECCOMP_FD = 6;
const BLOCK_FD = 7;

export function startContained(options: ContainedProcessOptions): ContainedProcess {
  return options.containment.mode === 'bwrap'
    ? startInBwrap(options, options.containment)
    : startUncontained(options);
}

/**
 * The ports to redirect to when a listener asks for it and the system has the tools (else none: a program
 * that ignores the proxy is then blocked, its name lookups alone recorded).
 */
function redirectionFor(listeners: readonly NamespaceListenerSpec[]): RedirectionPorts | undefined {
  const tcp = listeners.find((listener) => listener.protocol !== 'udp' && listener.redirect === 'tcp');
  if (tcp === undefined || tcp.protocol === 'udp' || redirectionUnavailable() !== undefined) return undefined;
  const dns = listeners.find((listener) => listener.protocol === 'udp' && listener.redirect === 'dns');
  return { tcp: tcp.port, dns: dns?.port, onDatagrams: tcp.onDatagrams };
}

function startInBwrap(
  options: ContainedProcessOptions,
  containment: Extract<ContainmentChoice, { mode: 'bwrap' }>,
): ContainedProcess {
  const user = options.agentUser;
  const setprivPath = containment.setprivPath;
  // Internal: sandbox-availability.ts refused, before any attempt, an agent user without setpriv.
  if (user !== undefined && setprivPath === undefined) {
    throw new Error('the agent must run as a user of its own, and no setpriv was found to make it so');
  }
  const network = options.network ?? 'host';
  // Under proxy the command waits until Witness has opened its listeners in the new namespace.
  const listeners = network === 'proxy' ? (options.namespaceListeners ?? []) : [];
  const blocked = listeners.length > 0;
  const argv = bwrapArguments({
    command: options.command,
    args: options.args,
    cwd: options.workspace.path,
    env: options.env,
    writable: [
      { path: options.workspace.path, childFd: WORKSPACE_FD },
      { path: options.home.path, childFd: HOME_FD },
    ],
    system: systemEntries(),
    shown: options.shown ?? [],
    hiddenDirectories: options.hiddenDirectories ?? [],
    // Only files that exist now: bwrap cannot create a mount point in a read-only bound directory (a
    // memory in WAL mode never has the `-journal` it would then fail on). A side file created later is
    // visible read-only.
    hiddenFiles: (options.hiddenFiles ?? []).filter((file) => existsSync(file)),
    network,
    agentUser: user === undefined || setprivPath === undefined ? undefined : { ...user, setprivPath },
    infoFd: INFO_FD,
    seccompFd: SECCOMP_FD,
    blockFd: blocked ? BLOCK_FD : undefined,
    readOnlyFiles: options.readOnlyFiles ?? [],
  });
  const child = spawn(containment.bwrapPath, argv, {
    cwd: '/',
    env: {},
    stdio: [
      'pipe',
      'pipe',
      'pipe',
      options.workspace.fd,
      options.home.fd,
      'pipe',
      'pipe',
      ...(blocked ? (['pipe'] as const) : []),
    ],
  });
  // bubblewrap reads the filter to its end before it starts anything: one small write, then the end.
  const seccomp = (child.stdio as unknown as Array<Writable | null>)[SECCOMP_FD] ?? null;
  seccomp?.on('error', () => undefined);
  seccomp?.end(keyringFilter());
  let init: { pid: number; startTime: string } | undefined;
  const info = (child.stdio as unknown as Array<Readable | null>)[INFO_FD] ?? null;
  const block = blocked ? ((child.stdio as unknown as Array<Writable | null>)[BLOCK_FD] ?? null) : null;
  block?.on('error', () => undefined);
  let servers: NamespaceEndpoint[] = [];
  let redirection: NamespaceRedirection | undefined;
  let infoText = '';
  let stopping = false;
  const reapMs = options.reapMs ?? 5_000;
  // The sandbox's network, set up before its command starts: its connections that ignore the proxy are
  // redirected to Witness, then the listeners opened; if that cannot be done, the command never starts.
  const setUpNetwork = (pid: number, deadline: number) => {
    if (stopping) return;
    try {
      const redirect = redirectionFor(listeners);
      if (redirect !== undefined) {
        redirection ??= redirectInNamespace(pid, redirect);
        if (!redirection.route()) {
          // bubblewrap brings the sandbox's lo up just after it reports its child: look again shortly.
          // Internal: bubblewrap itself dies when it cannot bring lo up.
          if (Date.now() > deadline) throw new Error("the sandbox's loopback never came up");
          setTimeout(() => setUpNetwork(pid, deadline), 1);
          return;
        }
      }
      servers = listenInNamespace(pid, listeners);
      block?.end('x');
    } catch (error) {
      // No listener, no start: the command never runs without its way out being the recorded one.
      child.emit(
        'error',
        new Error(`the sandbox's network could not be set up: ${(error as Error).message}`),
      );
      child.kill('SIGKILL');
    }
  };
  info?.on('data', (chunk: Buffer) => {
    infoText += chunk.toString('utf8');
    const match = /"child-pid"\s*:\s*(\d+)/.exec(infoText);
    if (match !== null && init === undefined) {
      const pid = Number(match[1]);
      const startTime = processStartTime(pid);
      if (startTime !== undefined) init = { pid, startTime };
      if (stopping) {
        // Stopped before the report came: the command must never start, so the blocked init is killed
        // rather than released.
        signal(pid);
        return;
      }
      if (blocked) setUpNetwork(pid, Date.now() + reapMs);
    }
  });
  info?.on('error', () => undefined);
  const infoDone = new Promise<void>((resolve) => {
    if (info === null) resolve();
    else info.once('close', () => resolve());
  });

  const killAll = () => {
    stopping = true;
    // The namespace's init first: its death kills everything inside at once, whatever bwrap does.
    if (init !== undefined) {
      if (!processGone(init.pid, init.startTime)) signal(init.pid);
    } else if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      killUnreportedInit(child.pid);
    }
    child.kill('SIGKILL');
    // Nothing is left to release: our end of the pipe must not keep Witness's event loop alive.
    block?.destroy();
  };
  const closeListeners = () => {
    for (const server of servers) server.close();
    servers = [];
  };
  const ensureGone = async (): Promise<{ allGone: boolean }> => {
    await settlesWithin(infoDone, reapMs);
    closeListeners();
    // bwrap reports its init before starting the command; an exit before that report means the
    // namespace never held a process of the agent.
    if (init === undefined) return { allGone: true };
    const { pid, startTime } = init;
    const deadline = Date.now() + reapMs;
    let killed = false;
    while (!processGone(pid, startTime)) {
      if (Date.now() >= deadline) {
        if (killed) return { allGone: false };
        signal(pid);
        killed = true;
      }
      await sleep(5);
    }
    return { allGone: true };
  };
  return lifecycle(child, options.drainMs ?? 1_000, killAll, async () => {
    try {
      return await ensureGone();
    } finally {
      // Once nothing of the agent is left to send: its dropped datagrams are read, then the rules let go.
      redirection?.close();
      redirection = undefined;
    }
  });
}

function startUncontained(options: ContainedProcessOptions): ContainedProcess {
  const user = options.agentUser;
  const setprivPath = options.containment.mode === 'none' ? options.containment.setprivPath : undefined;
  // Internal: resolveSandboxSettings found setpriv whenever attempts get users of their own.
  if (user !== undefined && setprivPath === undefined) {
    throw new Error('the agent must run as a user of its own, and no setpriv was found to make it so');
  }
  // As its own uid, with no_new_privs (no set-uid program gives it root back; bubblewrap sets the same).
  const [command, ...args] =
    user === undefined || setprivPath === undefined
      ? [options.command, ...options.args]
      : commandLine({ ...user, setprivPath }, options.command, options.args, { noNewPrivs: true });
  const own = { command: command as string, args };
  // With a cgroup of its own, the agent is started through a `sh` that waits (descriptor 3) until it is
  // in that cgroup: nothing it starts can be born outside it.
  let cgroup: ReturnType<typeof createAttemptCgroup> | undefined;
  let startError: string | undefined;
  if (options.cgroupParent !== undefined) {
    try {
      cgroup = createAttemptCgroup(options.cgroupParent);
    } catch (error) {
      startError = `the attempt's cgroup could not be made (${(error as Error).message})`;
    }
  }
  const started = options.cgroupParent === undefined ? own : waitingCommand(own.command, own.args);
  // `detached` makes the agent a session leader (setsid): its session id is its pid.
  const child = spawn(started.command, [...started.args], {
    cwd: options.workspace.path,
    env: { ...options.env },
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe', ...(options.cgroupParent === undefined ? [] : (['pipe'] as const))],
  });
  if (options.cgroupParent !== undefined) {
    const gate = (child.stdio as unknown as Array<Writable | null>)[3] ?? null;
    gate?.on('error', () => undefined);
    try {
      // Internal: caught just below, and the attempt ends with startError as its error.
      if (cgroup === undefined) throw new Error(startError);
      // Internal (caught below).
      if (child.pid === undefined) throw new Error('the agent did not start');
      cgroup.join(child.pid);
      gate?.end('\n');
    } catch (error) {
      // Never run the agent outside the cgroup it was given: it is ended before it executes.
      startError ??= `the attempt's cgroup could not be joined (${(error as Error).message})`;
      gate?.destroy();
      child.kill('SIGKILL');
    }
  }
  const directories = [options.workspace.path, options.home.path, ...(options.tmp ? [options.tmp.path] : [])];
  let stragglers = 0;
  const sweep = () => {
    if (child.pid === undefined) return { killed: 0, settled: true };
    const result = killAttemptProcesses({ sessionId: child.pid, directories, exclude: [process.pid] });
    stragglers += result.killed;
    return result;
  };
  const killAll = () => {
    if (child.pid !== undefined) signal(-child.pid);
    child.kill('SIGKILL');
    sweep();
  };
  const reapMs = options.reapMs ?? 5_000;
  return lifecycle(
    child,
    options.drainMs ?? 1_000,
    killAll,
    async () => {
      // Every process of the attempt, wherever it went (another session, `cd /`), dies with its cgroup,
      // and, as root's agent, with its uid: nothing else runs as that uid.
      const emptied = cgroup === undefined ? true : await cgroup.killAll(reapMs);
      const result = sweep();
      const uidEmptied = user === undefined ? true : killUid(user.uid);
      return { allGone: emptied && result.settled && uidEmptied };
    },
    () => ({ killedStragglers: stragglers, startError }),
  );
}

function lifecycle(
  child: ChildProcess,
  drainMs: number,
  killAll: () => void,
  ensureGone: () => Promise<{ allGone: boolean }>,
  report: () => { killedStragglers: number; startError?: string | undefined } = () => ({
    killedStragglers: 0,
  }),
): ContainedProcess {
  const stdout = child.stdout as Readable;
  const stderr = child.stderr as Readable;
  const stdin = child.stdin as Writable;
  stdin.on('error', () => undefined);
  const streamClosed = (stream: Readable) =>
    new Promise<void>((resolve) => {
      if (stream.destroyed || stream.readableEnded) resolve();
      else stream.once('close', () => resolve());
    });
  const outputClosed = Promise.all([streamClosed(stdout), streamClosed(stderr)]);

  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; spawnError?: string }>(
    (resolve) => {
      child.once('error', (error) => resolve({ code: null, signal: null, spawnError: error.message }));
      // 'exit', not 'close': a process holding stdout open must not delay ending the sandbox.
      child.once('exit', (code, exitSignal) => resolve({ code, signal: exitSignal }));
    },
  );
  const ended = (async (): Promise<ProcessEnd> => {
    const exit = await exited;
    // The agent's leader is gone; end everything it started before anyone looks at the workspace.
    killAll();
    const { allGone } = await ensureGone();
    let cutOff = false;
    const drained = await settlesWithin(outputClosed, drainMs);
    if (!drained) {
      cutOff = true;
      stdout.destroy();
      stderr.destroy();
    }
    stdin.destroy();
    const { killedStragglers, startError } = report();
    const spawnError = exit.spawnError ?? startError;
    return {
      code: exit.code,
      signal: exit.signal,
      ...(spawnError === undefined ? {} : { spawnError }),
      allGone,
      outputCutOff: cutOff,
      killedStragglers,
    };
  })();
  return {
    stdin,
    stdout,
    stderr,
    ended,
    stop() {
      killAll();
      return ended;
    },
  };
}

/**
 * Waits for `promise` (which never rejects) at most `ms`: true when it settled first. The bound's timer is
 * cleared as soon as the promise settles, so an attempt that ended leaves no timer behind to keep the
 * process alive: `witness run` exits when its last attempt is done, not `reapMs` later.
 */
function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    void promise.then(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/**
 * Stops bubblewrap before it has reported its namespace's init, and kills that init if it exists.
 *
 * The attack this stops is a race, not an agent: an attempt given up in the first milliseconds (Ctrl-C, a
 * cancelled job) killed the outer bwrap after its clone but before its `--info-fd` report. bwrap sets
 * `--die-with-parent` in the child only just before the command starts, so the child — blocked on
 * `--block-fd` under `network: proxy`, or about to exec the agent otherwise — lived on as an orphan: with
 * a blocked child, Witness's end of the pipe kept its event loop alive for ever; without, the agent would
 * run unwatched. The outer bwrap is stopped first (SIGSTOP: no clone can complete behind our back while
 * its children are read), then every child it has is killed — the init, whose death ends the namespace.
 */
function killUnreportedInit(outerPid: number): void {
  try {
    process.kill(outerPid, 'SIGSTOP');
  } catch {
    return; // already gone, and its children with it or reported to us
  }
  // kill() only queues the signal: the process may run on (on another core) until it takes it, so its
  // children are read once it is seen stopped (or gone), within a bound.
  const deadline = Date.now() + STOP_WAIT_MS;
  while (Date.now() < deadline) {
    const state = processState(outerPid);
    if (state === undefined || state === 'T' || state === 'Z' || state === 'X') break;
  }
  for (const pid of childrenOf(outerPid)) signal(pid);
}

/** How long a SIGSTOPped bwrap may take to stop before its children are read anyway. */
const STOP_WAIT_MS = 200;

/** Sends SIGKILL, ignoring a process that is already gone. */
function signal(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}
