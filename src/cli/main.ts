#!/usr/bin/env node
import type { CliIo } from './io.js';
import { acquiresAtOnce, isVersionRequest, runsScoreAlone, WITNESS_VERSION } from './version.js';

/** The acquisition pool, once `main` has loaded it (score and observe). */
let pool: { readonly idle: boolean } | undefined;

/**
 * The process runner: the only place that touches argv, the standard streams and the exit status. The
 * command tree (and the schemas its commands import) is loaded only when a command needs it: `witness
 * --version` answers without it, and each command loads its heavy parts (database drivers, targets,
 * the MCP SDK) when it runs.
 */
async function main(): Promise<number> {
  // No `module.enableCompileCache()`: its cache lives in the shared temporary directory, where an agent
  // run as an unsandboxed `command` target can write, and compiled code planted there would run inside
  // the next `witness`. The CLI is one bundle instead (scripts/bundle-cli.ts).
  if (isVersionRequest(process.argv.slice(2))) {
    process.stdout.write(`${WITNESS_VERSION}\n`);
    return 0;
  }
  if (acquiresAtOnce(process.argv.slice(2))) {
    // Its acquisition thread starts before anything else loads, so that its start-up (an isolate, Node's
    // bootstrap, the worker's code and, in the bundle, koffi's probe) runs on the other core while the
    // command's modules load. The pool's small module is awaited alone: imported beside the command tree,
    // its worker was created only once much of that tree had loaded.
    const { acquisitionPool } = await import('../sources/local-file/acquisition-pool.js');
    acquisitionPool.prewarm();
    pool = acquisitionPool;
  }
  if (!acquiresAtOnce(process.argv.slice(2))) {
    // Before any agent can be started: a descriptor inherited without close-on-exec (a CI runner's pipe,
    // a wrapper's open file) would otherwise reach every agent, past its sandbox (SPEC §13).
    const { markInheritedDescriptorsCloseOnExec } = await import('../sandbox/inherited-descriptors.js');
    const marking = markInheritedDescriptorsCloseOnExec();
    if (marking.marked === false) {
      process.stderr.write(
        `witness: warning: inherited descriptors could not be marked close-on-exec (${marking.reason}); agents may inherit them\n`,
      );
    }
  }
  const { EXIT_OK, runWitness } = runsScoreAlone(process.argv.slice(2))
    ? await loadScoreProcess()
    : await loadWitnessProcess();
  const controller = new AbortController();
  const onInterrupt = () => controller.abort(new Error('interrupted'));
  // `witness export | head`: the reader went away. Stop producing and exit quietly (status 0, as a
  // pipeline expects), instead of dying on an unhandled EPIPE with a stack trace.
  let stdoutClosed = false;
  const onStdoutError = (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    stdoutClosed = true;
    controller.abort(new Error('stdout closed'));
  };
  process.stdout.on('error', onStdoutError);
  process.once('SIGINT', onInterrupt);
  process.once('SIGTERM', onInterrupt);
  const io: CliIo = {
    out: (text) => {
      if (!stdoutClosed) process.stdout.write(text);
    },
    err: (text) => process.stderr.write(text),
    drain: () => stdoutDrained(controller.signal),
    signal: controller.signal,
    errIsTTY: process.stderr.isTTY === true,
    env: process.env,
  };
  try {
    const status = await runWitness(process.argv.slice(2), io);
    // A reader that went away is not a failure of the command (see onStdoutError).
    return stdoutClosed ? EXIT_OK : status;
  } finally {
    process.off('SIGINT', onInterrupt);
    process.off('SIGTERM', onInterrupt);
  }
}

type RunCommandLine = (args: readonly string[], io: CliIo) => Promise<number>;

/** The runner of any command line: the split command tree, each command loaded when it runs. */
async function loadWitnessProcess(): Promise<{ EXIT_OK: number; runWitness: RunCommandLine }> {
  const [{ EXIT_OK }, { runWitness }] = await Promise.all([
    import('./exit-status.js'),
    import('./run-witness.js'),
  ]);
  return { EXIT_OK, runWitness };
}

/**
 * The runner of `witness score …` alone (score-process.ts): the same command, loaded as one file in the
 * bundle. It shares the acquisition pool prewarmed above (the bundle keeps that module out of the file).
 */
async function loadScoreProcess(): Promise<{ EXIT_OK: number; runWitness: RunCommandLine }> {
  const { EXIT_OK, runScoreCommandLine } = await import('./score-process.js');
  return { EXIT_OK, runWitness: runScoreCommandLine };
}

/**
 * Whether `witness score` may end with `process.exit` instead of letting the event loop run dry. Node then
 * skips tearing the main thread down (its environment's cleanup, waiting for V8's background tasks,
 * freeing the heap): 30–45 ms of every `witness score` under load, most of what the process spent after
 * its `exit` event beyond `node -e 0`'s. Only when nothing can be lost by it:
 * - the command has returned, so everything it awaited (the memory's close with --db) is done;
 * - no acquisition thread is running a job or still probing: `process.exit` terminates every thread, and
 *   one terminated inside koffi's native code aborts the process (acquire-worker.ts; the prewarmed thread
 *   of a `witness score --help` is still probing when the command returns, so that exit stays natural);
 * - nothing is buffered for stdout or stderr: writes to files and terminals are synchronous on Linux, and
 *   to a pipe while it has room; past that Node queues the rest, and then the exit stays natural, which
 *   flushes it (test/package/score-exit.test.ts sends 0.5 MB through a pipe);
 * - no write to stdout or stderr failed: a file's write error (ENOSPC, EIO) is known at once but reported
 *   by an 'error' event after this point, and the natural exit reports it and ends with status 1 (an exit
 *   here would end with the verdict's status and lose the output silently; the test writes to /dev/full).
 * Other commands keep the natural exit: they may hold servers, queues or child processes.
 */
function endsAtOnce(): boolean {
  return (
    runsScoreAlone(process.argv.slice(2)) &&
    pool?.idle === true &&
    process.stdout.writableLength === 0 &&
    process.stderr.writableLength === 0 &&
    process.stdout.errored == null &&
    process.stderr.errored == null
  );
}

const status = await main();
if (endsAtOnce()) process.exit(status);
process.exitCode = status;

/** Resolves when stdout has room again, or at once when it has room, is closed, or the command is aborted. */
function stdoutDrained(signal: AbortSignal): Promise<void> {
  const stdout = process.stdout;
  if (!stdout.writableNeedDrain || stdout.destroyed || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      stdout.off('drain', done);
      stdout.off('close', done);
      stdout.off('error', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    stdout.once('drain', done);
    stdout.once('close', done);
    stdout.once('error', done);
    signal.addEventListener('abort', done, { once: true });
  });
}
