import { buildSingleCommandProgram, singleCommandOf } from './command-modules.js';
import type { CliIo } from './io.js';
import { runCommandLine } from './run-command-line.js';

/**
 * Runs one `witness` command line (the arguments after the program name) against an IO and returns its
 * exit status; failures are printed to `io.err` and mapped to a status (run-command-line.ts). The process
 * runner (main.ts) and in-process tests both go through here, so they cannot disagree.
 */
export async function runWitness(args: readonly string[], io: CliIo): Promise<number> {
  return runCommandLine(args, io, async () => {
    // `witness score …` needs the score command only; help and anything unusual get the whole tree.
    const single = singleCommandOf(args);
    return single === undefined
      ? (await import('./program.js')).buildProgram(io)
      : await buildSingleCommandProgram(io, single);
  });
}
