import type { Command } from 'commander';
import { classifyFailure, EXIT_OK } from './exit-status.js';
import type { CliIo } from './io.js';

/**
 * Parses one command line with the program `build` gives and returns its exit status; failures are
 * printed to `io.err` and mapped to a status by {@link classifyFailure}. Every way the CLI runs a command
 * line goes through here (run-witness.ts for any command, score-process.ts for `witness score` in the
 * bundle), so they cannot disagree about what is printed or which status a failure gets.
 */
export async function runCommandLine(
  args: readonly string[],
  io: CliIo,
  build: () => Promise<Command>,
): Promise<number> {
  try {
    const program = await build();
    await program.parseAsync([...args], { from: 'user' });
    return EXIT_OK;
  } catch (error) {
    const failure = classifyFailure(error, io.signal.aborted);
    if (failure.message !== undefined) io.err(`${failure.message}\n`);
    return failure.status;
  }
}
