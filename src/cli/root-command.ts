import { Command } from 'commander';
import { neutralizeText } from '../text/quote-text.js';
import type { CliIo } from './io.js';
import { WITNESS_VERSION } from './version.js';

/**
 * The `witness` root command, configured once for both ways the CLI is built: the whole command tree
 * (program.ts) and a tree holding only the command being run (command-modules.ts).
 */
export function rootCommand(io: CliIo): Command {
  return new Command('witness')
    .description('Red-team AI agents by what they did to the file system, not by what they said.')
    .version(WITNESS_VERSION)
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({ writeOut: (text) => io.out(text), writeErr: errWriter(io) });
}

/** A registration of one command (and its subcommands) on the root command. */
export type RegisterCommand = (program: Command, io: CliIo) => void;

/** The root command holding only the command `register` adds, configured as the whole tree is. */
export function singleCommandProgram(io: CliIo, register: RegisterCommand): Command {
  const program = rootCommand(io);
  register(program, io);
  configureSubcommands(program, io);
  return program;
}

/** Every subcommand writes through the IO too and throws instead of exiting. */
export function configureSubcommands(command: Command, io: CliIo): void {
  const writeErr = errWriter(io);
  for (const child of command.commands) {
    child.exitOverride().configureOutput({ writeOut: (text) => io.out(text), writeErr });
    configureSubcommands(child, io);
  }
}

// Commander echoes what was typed ("unknown option '…'"), which may be pasted agent text.
function errWriter(io: CliIo): (text: string) => void {
  return (text) => io.err(neutralizeText(text, { multiline: true }));
}
