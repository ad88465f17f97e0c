// The exit watchdog of a fast-lane process (test-support/run-tests.mjs writes it into every process it
// starts). node's test runner ends a test file's process when its event loop empties; a file whose tests
// all pass but leave something holding the loop (a child process never reaped, a server never closed, a
// ref'd interval) keeps that process alive, and the runner waits on it for ever: CI hangs with every test
// green. So once the process's last test has ended, an unref'd timer is armed; if it fires, the process is
// still alive with nothing left to run. It then names what holds the loop and the test file each thing was
// first seen after, kills the child processes left behind, and exits with status 1 (the runner counts the
// process as one failure).
//
// Attribution: after each file's tests, the live handles (process._getActiveHandles(): sockets, servers,
// child processes) not seen before are marked with that file; a timer is no handle object there, so for
// timers the files after which more ref'd timers were alive than before are named instead.

/** How long a process may stay alive after its last test before the watchdog calls it a hang. */
export const EXIT_GRACE_MS = 60_000;

/** Resource types the handles and the timer count above already name. */
const NAMED_RESOURCES = new Set([
  'Timeout',
  'TTYWrap',
  'PipeWrap',
  'PipeServerWrap',
  'TCPWrap',
  'TCPSocketWrap',
  'TCPServerWrap',
  'ProcessWrap',
  'FSReqCallback',
]);

const firstSeen = new WeakMap();
/** [file, ref'd timers alive after it] in the order the files ran. */
const timersAfter = [];

function liveHandles() {
  // Undocumented but present on every Node.js line Witness supports; a loss here only loses attribution.
  if (typeof process._getActiveHandles !== 'function') return [];
  // The process's own stdio (pipes to the runner) is listed too, but never holds the process.
  const own = new Set([process.stdin, process.stdout, process.stderr]);
  return process._getActiveHandles().filter((handle) => !own.has(handle));
}

function timerCount() {
  return process.getActiveResourcesInfo().filter((type) => type === 'Timeout').length;
}

/** Marks what is alive after a file's tests as that file's (called from the file's suite's `after`). */
export function noteFileEnd(file) {
  for (const handle of liveHandles()) if (!firstSeen.has(handle)) firstSeen.set(handle, file);
  timersAfter.push([file, timerCount()]);
}

/** One line per thing holding the event loop, with the file it was first seen after. */
export function describeLiveHandles(lastFile) {
  const lines = [];
  for (const handle of liveHandles()) {
    if (typeof handle.hasRef === 'function' && !handle.hasRef()) continue;
    const file = firstSeen.get(handle) ?? lastFile;
    lines.push(`${describeHandle(handle)}, left by ${file}`);
  }
  const timers = timerCount();
  if (timers > 0) {
    const rose = [];
    let before = 0;
    for (const [file, count] of timersAfter) {
      if (count > before) rose.push(file);
      before = count;
    }
    lines.push(
      `${timers} ref'd timer(s) (a setInterval or setTimeout never cleared)${rose.length > 0 ? `, more alive after ${rose.join(', ')}` : ''}`,
    );
  }
  // What no handle above stands for (a pending file-system request or DNS lookup, a worker's port).
  const other = process.getActiveResourcesInfo().filter((type) => !NAMED_RESOURCES.has(type));
  if (other.length > 0) lines.push(`other resources: ${other.join(', ')}`);
  return lines;
}

function describeHandle(handle) {
  const kind = handle?.constructor?.name ?? typeof handle;
  if (kind === 'ChildProcess') {
    const command = Array.isArray(handle.spawnargs) ? handle.spawnargs.join(' ') : handle.spawnfile;
    return `child process ${handle.pid} (${String(command).slice(0, 120)})`;
  }
  if (kind === 'Server' && typeof handle.address === 'function') {
    const address = handle.address();
    return `server listening on ${typeof address === 'string' ? address : `${address?.address}:${address?.port}`}`;
  }
  if (kind === 'Socket') {
    const wrap = handle._handle?.constructor?.name;
    return wrap === 'Pipe'
      ? "pipe (a child process's stdio, or a unix socket)"
      : `socket (${wrap ?? 'closed'})`;
  }
  return kind;
}

/**
 * Arms the watchdog after the process's last test (called from a root `after`): the timer is unref'd, so a
 * process that ends on its own never waits for it.
 */
export function armExitWatchdog(processName, lastFile, graceMs = EXIT_GRACE_MS) {
  const timer = setTimeout(() => {
    const lines = describeLiveHandles(lastFile);
    const killed = [];
    for (const handle of liveHandles()) {
      if (
        handle?.constructor?.name === 'ChildProcess' &&
        handle.exitCode === null &&
        handle.pid !== undefined
      ) {
        try {
          process.kill(handle.pid, 'SIGKILL');
          killed.push(handle.pid);
        } catch {
          // Already gone.
        }
      }
    }
    process.stderr.write(
      `exit watchdog: ${processName} is still alive ${graceMs / 1000} s after its last test ended: something a test started holds the event loop, and the runner would wait on it for ever.\n` +
        (lines.length > 0 ? lines.map((line) => `  - ${line}\n`).join('') : '  - (nothing node can name)\n') +
        (killed.length > 0 ? `  killed the child processes left behind: ${killed.join(', ')}\n` : ''),
    );
    process.exit(1);
  }, graceMs);
  timer.unref();
}
