import type { Command } from 'commander';
import { SCORE_STATUSES, type ScoreStatus } from '../../models/vocabulary.js';
import { type CliIo, printJson } from '../io.js';
import { dbOption, READ_ONLY, resolveDb, withMemory } from '../memory-option.js';
import { excerpt, renderObservation, renderScore } from '../render.js';
import { attemptOrigins, describeScorable, renderScoreTable } from '../render-memory.js';
import { UsageError } from '../usage-error.js';

/** `witness scores list` and `witness scores show ID`: what the memory holds, as a table or JSON. */
export function registerScores(program: Command, io: CliIo): void {
  const scores = program.command('scores').description('list and show the scores stored in the memory');

  scores
    .command('list')
    .description('list stored scores, oldest first')
    .option('--status <status>', `only scores of this status (${SCORE_STATUSES.join(' or ')})`)
    .option('--observation <id>', 'only scores resting on this observation')
    .option('--conversation <id>', 'only scores about a message of this conversation')
    .option('--limit <n>', 'at most this many scores')
    .addOption(dbOption())
    .option('--json', 'print { scores } as JSON')
    .action(async (options: Record<string, unknown>) => {
      const filter = {
        status: readStatus(options.status),
        observationId: typeof options.observation === 'string' ? options.observation : undefined,
        conversationId: typeof options.conversation === 'string' ? options.conversation : undefined,
        limit: readLimit(options.limit),
      };
      await withMemory(
        resolveDb(options, io.env),
        async (memory) => {
          const list = await memory.listScores(filter);
          if (options.json === true) printJson(io, { scores: list });
          else if (list.length === 0) io.out(`no scores stored in ${excerpt(memory.location.target, 300)}\n`);
          else io.out(`${renderScoreTable(list, await attemptOrigins(memory, list))}\n`);
        },
        READ_ONLY,
      );
    });

  scores
    .command('show')
    .description('show one stored score with the evidence it rests on')
    .argument('<id>', 'the score id')
    .addOption(dbOption())
    .option('--json', 'print { score, observations } as JSON')
    .action(async (id: string, options: Record<string, unknown>) => {
      await withMemory(
        resolveDb(options, io.env),
        async (memory) => {
          const score = await memory.getScore(id);
          const observations = await memory.observationsForScore(id);
          if (options.json === true) {
            printJson(io, { score, observations });
            return;
          }
          const origin = (await attemptOrigins(memory, [score])).get(score.id);
          const lines = [
            `Score ${excerpt(score.id, 80)} (${excerpt(score.createdAt, 40)}) about ${describeScorable(score.scorable, origin)}`,
            renderScore(score),
            ...observations.map((observation) => renderObservation(observation, { content: true })),
          ];
          if (observations.length === 0) lines.push('Evidence: none (the score was decided without reading)');
          io.out(`${lines.join('\n')}\n`);
        },
        READ_ONLY,
      );
    });
}

function readStatus(value: unknown): ScoreStatus | undefined {
  if (value === undefined) return undefined;
  const status = SCORE_STATUSES.find((known) => known === value);
  if (status === undefined) {
    throw new UsageError(`--status takes ${SCORE_STATUSES.join(' or ')}, got ${JSON.stringify(value)}`);
  }
  return status;
}

function readLimit(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const text = String(value);
  if (!/^[1-9][0-9]*$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw new UsageError(`--limit takes a positive whole number, got ${JSON.stringify(text)}`);
  }
  return Number(text);
}
