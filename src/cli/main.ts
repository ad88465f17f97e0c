#!/usr/bin/env node
import type { CliIo } from './io.js';
import { runWitness } from './run-witness.js';

/** The process runner: the only place that touches argv, the standard streams and the exit status. */
async function main(): Promise<number> {
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
    return await runWitness(process.argv.slice(2), io);
  } finally {
    process.off('SIGINT', onInterrupt);
    process.off('SIGTERM', onInterrupt);
  }
}

process.exitCode = await main();
