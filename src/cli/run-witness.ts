import { buildSingleCommandProgram, singleCommandOf } from './command-modules.js';
import { classifyFailure, EXIT_OK } from './exit-status.js';
import type { CliIo } from './io.js';

/**
 * Runs one `witness` command line (the arguments after the program name) against an IO and returns its
 * exit status; failures are printed to `io.err` and mapped to a status by {@link classifyFailure}. The
 * process runner (main.ts) and in-process tests both go through here, so they cannot disagree.
 */
export async function runWitness(args: readonly string[], io: CliIo): Promise<number> {
  try {
    // `witness score …` needs the score command only; help and anything unusual get the whole tree.
    const single = singleCommandOf(args);
    const program =
      single === undefined
        ? (await import('./program.js')).buildProgram(io)
        : await buildSingleCommandProgram(io, single);
    await program.parseAsync([...args], { from: 'user' });
    return EXIT_OK;
  } catch (error) {
    const failure = classifyFailure(error, io.signal.aborted);
    if (failure.message !== undefined) io.err(`${failure.message}\n`);
    return failure.status;
  }
}
