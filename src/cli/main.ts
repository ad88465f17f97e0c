#!/usr/bin/env node
import module from 'node:module';
import type { CliIo } from './io.js';
import { isVersionRequest, WITNESS_VERSION } from './version.js';

/**
 * The process runner: the only place that touches argv, the standard streams and the exit status. The
 * command tree (and the schemas its commands import) is loaded only when a command needs it: `witness
 * --version` answers without it, and each command loads its heavy parts (database drivers, targets,
 * the MCP SDK) when it runs.
 */
async function main(): Promise<number> {
  // Node 22+ keeps compiled code of the modules below on disk between runs (a no-op on Node 20).
  (module as { enableCompileCache?: () => unknown }).enableCompileCache?.();
  if (isVersionRequest(process.argv.slice(2))) {
    process.stdout.write(`${WITNESS_VERSION}\n`);
    return 0;
  }
  const [{ classifyFailure, EXIT_OK }, { buildProgram }] = await Promise.all([
    import('./exit-status.js'),
    import('./program.js'),
  ]);
  const controller = new AbortController();
  const onInterrupt = () => controller.abort(new Error('interrupted'));
  process.once('SIGINT', onInterrupt);
  process.once('SIGTERM', onInterrupt);
  const io: CliIo = {
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
    signal: controller.signal,
    errIsTTY: process.stderr.isTTY === true,
    env: process.env,
  };
  try {
    await buildProgram(io).parseAsync(process.argv);
    return EXIT_OK;
  } catch (error) {
    const failure = classifyFailure(error, controller.signal.aborted);
    if (failure.message !== undefined) io.err(`${failure.message}\n`);
    return failure.status;
  } finally {
    process.off('SIGINT', onInterrupt);
    process.off('SIGTERM', onInterrupt);
  }
}

process.exitCode = await main();
