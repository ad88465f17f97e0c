import type { Command } from 'commander';
import { type CliIo, printJson } from '../io.js';
import { dbOption, READ_ONLY, resolveDb, withMemory } from '../memory-option.js';
import { excerpt, renderObservation } from '../render.js';
import { attemptOrigins, renderScoreTable } from '../render-memory.js';

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
      await withMemory(
        resolveDb(options, io.env),
        async (memory) => {
          const observation = await memory.getObservation(id);
          if (options.json === true) {
            printJson(io, { observation });
            return;
          }
          const pieces = await memory.messagePiecesForObservation(id);
          const scores = await memory.listScores({ observationId: id });
          const lines = [
            `Observation ${excerpt(observation.id, 80)}, observed ${excerpt(observation.observedAt, 40)} by ${excerpt(observation.sourceIdentifier.type, 80)}`,
            renderObservation(observation, { content: true }),
          ];
          if (pieces.length > 0) {
            lines.push(`Taken after message pieces: ${pieces.map((piece) => excerpt(piece, 80)).join(', ')}`);
          }
          lines.push(
            scores.length === 0
              ? 'No stored score rests on it.'
              : renderScoreTable(scores, await attemptOrigins(memory, scores)),
          );
          io.out(`${lines.join('\n')}\n`);
        },
        READ_ONLY,
      );
    });
}
