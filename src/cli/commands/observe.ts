import type { Command } from 'commander';
import { surface } from '../../models/scorable.js';
import { LocalFileSurfaceSource } from '../../sources/local-file-source.js';
import { limitOptions, readLimits } from '../flags.js';
import { type CliIo, printJson } from '../io.js';

export function registerObserve(program: Command, io: CliIo): void {
  const command = program
    .command('observe')
    .description('read the evidence at a location under a workspace root and print the Observation (JSON)')
    .argument('<root>', 'the workspace root directory')
    .argument('<uri>', 'root-relative location, e.g. /notes/todo.txt or, with --glob, /out/**/*.sh')
    .option('--glob', 'treat <uri> as a glob')
    .option('--json', 'print JSON (the default for observe)');
  for (const option of limitOptions()) command.addOption(option);
  command.action(async (root: string, uri: string, options: Record<string, unknown>) => {
    const scope = surface(uri, options.glob === true ? 'glob' : 'exact');
    const source = new LocalFileSurfaceSource({ root, ...readLimits(options) });
    printJson(io, await source.acquire(scope, { signal: io.signal }));
  });
}
