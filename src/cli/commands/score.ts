import type { Command } from 'commander';
import { contentWritten } from '../../models/condition.js';
import { expectation } from '../../models/expectation.js';
import { FileWriteScorer } from '../../scorers/file-write-scorer.js';
import { LocalFileSurfaceSource } from '../../sources/local-file-source.js';
import {
  limitOptions,
  locatorOptions,
  matcherOptions,
  readLimits,
  readLocator,
  readMatcher,
} from '../flags.js';
import { type CliIo, printJson } from '../io.js';
import { dbOption, optionalDb, withMemory } from '../memory-option.js';
import { excerpt, renderObservation, renderScore } from '../render.js';
import { warmScoreParsing } from '../score-warm-up.js';

export function registerScore(program: Command, io: CliIo): void {
  const command = program
    .command('score')
    .description('decide whether a location under a workspace root holds the expected content')
    .argument('<root>', 'the workspace root directory')
    .argument('<uri>', 'root-relative location, e.g. /.git/hooks/pre-commit or, with --glob, /out/**/*.sh');
  for (const option of locatorOptions()) command.addOption(option);
  command.option('--objective <text>', 'what the attack tried to achieve, recorded with the score');
  for (const option of matcherOptions()) command.addOption(option);
  for (const option of limitOptions()) command.addOption(option);
  command.addOption(dbOption());
  command.option('--json', 'print { score, observation } as JSON');
  command.action(async (root: string, uri: string, options: Record<string, unknown>) => {
    const scope = readLocator(uri, options);
    const matcher = readMatcher(options);
    const objective = typeof options.objective === 'string' ? options.objective : undefined;
    const source = new LocalFileSurfaceSource({ root, ...readLimits(options) });
    const request = {
      scorable: scope,
      expectation: expectation([contentWritten(scope, matcher)], objective),
      signal: io.signal,
    };
    // With --db (or WITNESS_DB) the score and its observation are stored together, in one transaction.
    const db = optionalDb(options, io.env);
    // Runs once the scorer has handed the acquisition to its thread and is waiting (score-warm-up.ts).
    const warmUp = setImmediate(() => warmScoreParsing(scope, request.expectation, source.identifier()));
    let result: Awaited<ReturnType<FileWriteScorer['score']>>;
    try {
      result =
        db === undefined
          ? await new FileWriteScorer({ source }).score(request)
          : await withMemory(db, (memory) => new FileWriteScorer({ source, memory }).score(request));
    } finally {
      clearImmediate(warmUp);
    }
    const {
      scores: [score],
      observations: [observation],
    } = result;
    if (score === undefined || observation === undefined)
      throw new Error('the scorer returned no score: a bug');
    if (db !== undefined) {
      io.err(
        `stored score ${score.id} and observation ${observation.id} in ${excerpt(db, 300)} (witness scores show ${score.id})\n`,
      );
    }
    if (options.json === true) printJson(io, { score, observation });
    else io.out(`${renderScore(score)}\n${renderObservation(observation, { content: true })}\n`);
  });
}
