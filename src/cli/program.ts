import { Command } from 'commander';
import { registerDemo } from './commands/demo.js';
import { registerObserve } from './commands/observe.js';
import { registerReplay } from './commands/replay.js';
import { registerRun } from './commands/run.js';
import { registerScore } from './commands/score.js';
import type { CliIo } from './io.js';

/** The embeddable command tree. The runner in main.ts maps outcomes to exit codes. */
export function buildProgram(io: CliIo): Command {
  const program = new Command('witness')
    .description('Red-team AI agents by what they did to the file system, not by what they said.')
    .version('0.1.0')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({ writeOut: (text) => io.out(text), writeErr: (text) => io.err(text) });
  registerObserve(program, io);
  registerScore(program, io);
  registerReplay(program, io);
  registerRun(program, io);
  registerDemo(program, io);
  for (const command of program.commands) {
    command
      .exitOverride()
      .configureOutput({ writeOut: (text) => io.out(text), writeErr: (text) => io.err(text) });
  }
  return program;
}
