import type { Command } from 'commander';
import type { CliIo } from './io.js';
import { type RegisterCommand, singleCommandProgram } from './root-command.js';

/**
 * `witness <command> …` loads only that command's module (and what it imports), not the whole command
 * tree: `witness score` then never loads the runner, the targets, the model server or the memory
 * archive. Anything else (`witness`, `--help`, `help <command>`, an unknown or misspelt command, an
 * option before the command) builds the whole tree, so help and "did you mean" stay complete. A command
 * missing from this table is still served, through the whole tree.
 */

const COMMAND_MODULES: Readonly<Record<string, () => Promise<RegisterCommand>>> = {
  observe: async () => (await import('./commands/observe.js')).registerObserve,
  score: async () => (await import('./commands/score.js')).registerScore,
  replay: async () => (await import('./commands/replay.js')).registerReplay,
  run: async () => (await import('./commands/run.js')).registerRun,
  demo: async () => (await import('./commands/demo.js')).registerDemo,
  report: async () => (await import('./commands/report.js')).registerReport,
  scores: async () => (await import('./commands/scores.js')).registerScores,
  observations: async () => (await import('./commands/observations.js')).registerObservations,
  export: async () => (await import('./commands/export.js')).registerExport,
  import: async () => (await import('./commands/import.js')).registerImport,
  clean: async () => (await import('./commands/clean.js')).registerClean,
  view: async () => (await import('./commands/view.js')).registerView,
  attacks: async () => (await import('./commands/attacks.js')).registerAttacks,
  model: async () => (await import('./commands/model.js')).registerModel,
  worker: async () => (await import('./commands/worker.js')).registerWorker,
  runs: async () => (await import('./commands/runs.js')).registerRuns,
  doctor: async () => (await import('./commands/doctor.js')).registerDoctor,
};

/** The commands served by their own module (and, in the bundled CLI, their own chunk). */
export const SINGLE_COMMANDS: readonly string[] = Object.keys(COMMAND_MODULES);

/** The command a command line runs, when it can be served by its module alone. */
export function singleCommandOf(args: readonly string[]): string | undefined {
  const name = args[0];
  return name !== undefined && Object.hasOwn(COMMAND_MODULES, name) ? name : undefined;
}

/** The root command holding only `name` (one of {@link singleCommandOf}'s answers), configured as usual. */
export async function buildSingleCommandProgram(io: CliIo, name: string): Promise<Command> {
  const load = COMMAND_MODULES[name];
  if (load === undefined) throw new Error(`no module for the command ${name}: a bug`);
  return singleCommandProgram(io, await load());
}
