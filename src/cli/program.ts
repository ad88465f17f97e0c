import type { Command } from 'commander';
import { registerAttacks } from './commands/attacks.js';
import { registerClean } from './commands/clean.js';
import { registerDemo } from './commands/demo.js';
import { registerDoctor } from './commands/doctor.js';
import { registerExport } from './commands/export.js';
import { registerImport } from './commands/import.js';
import { registerModel } from './commands/model.js';
import { registerObservations } from './commands/observations.js';
import { registerObserve } from './commands/observe.js';
import { registerReplay } from './commands/replay.js';
import { registerReport } from './commands/report.js';
import { registerRun } from './commands/run.js';
import { registerRuns } from './commands/runs.js';
import { registerScore } from './commands/score.js';
import { registerScores } from './commands/scores.js';
import { registerView } from './commands/view.js';
import { registerWorker } from './commands/worker.js';
import type { CliIo } from './io.js';
import { configureSubcommands, rootCommand } from './root-command.js';

/** The embeddable command tree. The runner in main.ts maps outcomes to exit codes. */
export function buildProgram(io: CliIo): Command {
  const program = rootCommand(io);
  registerObserve(program, io);
  registerScore(program, io);
  registerReplay(program, io);
  registerRun(program, io);
  registerDemo(program, io);
  registerReport(program, io);
  registerScores(program, io);
  registerObservations(program, io);
  registerExport(program, io);
  registerImport(program, io);
  registerClean(program, io);
  registerView(program, io);
  registerAttacks(program, io);
  registerModel(program, io);
  registerWorker(program, io);
  registerRuns(program, io);
  registerDoctor(program, io);
  configureSubcommands(program, io);
  return program;
}
