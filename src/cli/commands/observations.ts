import type { Command } from 'commander';
import { type CliIo, printJson } from '../io.js';
import { dbOption, resolveDb, withMemory } from '../memory-option.js';
import { renderObservation } from '../render.js';
import { renderScoreTable } from '../render-memory.js';

/** `witness observations show ID`: one stored observation and the scores resting on it. */
export function registerObservations(program: Command, io: CliIo): void {
  const observations = program.command('observations').description('show observations stored in the memory');

  observations
    .command('show')
    .description('show one stored observation, the message it was taken after, and the scores resting on it')
    .argument('<id>', 'the observation id')
    .addOption(dbOption())
    .option('--json', 'print { observation } as JSON')
    .action(async (id: string, options: Record<string, unknown>) => {
      await withMemory(resolveDb(options, io.env), async (memory) => {
        const observation = await memory.getObservation(id);
        if (options.json === true) {
          printJson(io, { observation });
          return;
        }
        const pieces = await memory.messagePiecesForObservation(id);
        const scores = await memory.listScores({ observationId: id });
        const lines = [
          `Observation ${observation.id}, observed ${observation.observedAt} by ${observation.sourceIdentifier.type}`,
          renderObservation(observation),
        ];
        if (pieces.length > 0) lines.push(`Taken after message pieces: ${pieces.join(', ')}`);
        lines.push(scores.length === 0 ? 'No stored score rests on it.' : renderScoreTable(scores));
        io.out(`${lines.join('\n')}\n`);
      });
    });
}
