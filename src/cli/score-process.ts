import { registerScore } from './commands/score.js';
import type { CliIo } from './io.js';
import { singleCommandProgram } from './root-command.js';
import { runCommandLine } from './run-command-line.js';

/**
 * `witness score …` as one module graph, for main.ts: in the bundled CLI this graph is one file
 * (`dist/cli/score-process.js`, scripts/bundle-cli.ts) instead of the ≈ 35 chunks the split command tree
 * loads, each of which costs the ES module loader ≈ 0.7 ms before any of its code runs. It runs the
 * command line exactly as run-witness.ts does for `score`: the same root command holding the score command
 * alone, the same parse, the same failure statuses (run-command-line.ts).
 */

export { EXIT_OK } from './exit-status.js';

/** {@link runWitness} for a command line whose command is `score` (`runsScoreAlone` in version.ts). */
export async function runScoreCommandLine(args: readonly string[], io: CliIo): Promise<number> {
  return runCommandLine(args, io, async () => singleCommandProgram(io, registerScore));
}
