#!/usr/bin/env node
import type { CliIo } from './io.js';
import { acquiresAtOnce, isVersionRequest, runsScoreAlone, WITNESS_VERSION } from './version.js';

/**
 * The process runner: the only place that touches argv, the standard streams and the exit status. The
 * command tree (and the schemas its commands import) is loaded only when a command needs it: `witness
 * --version` answers without it, and each command loads its heavy parts (database drivers, targets,
 * the MCP SDK) when it runs.
 */
async function main(): Promise<number> {
  // No `module.enableCompileCache()`: its cache lives in the shared temporary directory, where an agent
  // run as an unsandboxed `command` target can write, and compiled code planted there would run inside
  // the next `witness` (docs/perf/s14-start.md). The CLI is one bundle instead (scripts/bundle-cli.ts).
  if (isVersionRequest(process.argv.slice(2))) {
    process.stdout.write(`${WITNESS_VERSION}\n`);
    return 0;
  }
  if (acquiresAtOnce(process.argv.slice(2))) {
    // Its acquisition thread starts before anything else loads, so that its start-up (an isolate, Node's
    // bootstrap, the worker's code and, in the bundle, koffi's probe) runs on the other core while the
    // command's modules load. The pool's small module is awaited alone: imported beside the command tree,
    // its worker was created only once much of that tree had loaded (docs/perf/s15-start.md).
    const { acquisitionPool } = await import('../sources/local-file/acquisition-pool.js');
    acquisitionPool.prewarm();
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

process.exitCode = await main();
