import type { Command } from 'commander';
import { LocalFileSurfaceSource } from '../../sources/local-file-source.js';
import { limitOptions, locatorOptions, readLimits, readLocator } from '../flags.js';
import { type CliIo, printJson } from '../io.js';
import { renderObservation } from '../render.js';

export function registerObserve(program: Command, io: CliIo): void {
  const command = program
    .command('observe')
    .description('read the evidence at a location under a workspace root and print the Observation (JSON)')
    .argument('<root>', 'the workspace root directory')
    .argument('<uri>', 'root-relative location, e.g. /notes/todo.txt or, with --glob, /out/**/*.sh');
  for (const option of locatorOptions()) command.addOption(option);
  command
    .option('--json', 'print JSON (the default for observe)')
    .option('--text', 'print the evidence for a person (files, sizes, digests, content excerpts, gaps)');
  for (const option of limitOptions()) command.addOption(option);
  command.action(async (root: string, uri: string, options: Record<string, unknown>) => {
    const scope = readLocator(uri, options);
    const source = new LocalFileSurfaceSource({ root, ...readLimits(options) });
    const observation = await source.acquire(scope, { signal: io.signal });
    if (options.text === true && options.json !== true) {
      io.out(`${renderObservation(observation, { content: true })}\n`);
    } else printJson(io, observation);
  });
}
