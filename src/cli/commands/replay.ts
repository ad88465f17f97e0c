import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { z } from 'zod';
import { contentWritten } from '../../models/condition.js';
import { expectation } from '../../models/expectation.js';
import type { Matcher } from '../../models/matcher.js';
import { type Observation, ObservationSchema } from '../../models/observation.js';
import { describeIssues } from '../../models/record.js';
import { ScoreSchema } from '../../models/score.js';
import { FileWriteScorer } from '../../scorers/file-write-scorer.js';
import type { SurfaceSource } from '../../sources/surface-source.js';
import { matcherOptions, readMatcher } from '../flags.js';
import { type CliIo, printJson } from '../io.js';
import { renderObservation, renderScore } from '../render.js';
import { UsageError } from '../usage-error.js';

/** A replay file is an Observation, or the `{ score, observation }` that `witness score --json` prints. */
const ScoreOutputSchema = z.strictObject({ score: ScoreSchema, observation: ObservationSchema });

export function registerReplay(program: Command, io: CliIo): void {
  const command = program
    .command('replay')
    .description('judge stored evidence again, offline, optionally with a new text criterion')
    .argument('<observation.json>', 'an Observation, or the output of `witness score --json`');
  for (const option of matcherOptions()) command.addOption(option);
  command.option('--json', 'print { score } as JSON');
  command.action(async (file: string, options: Record<string, unknown>) => {
    const stored = await readReplayFile(file);
    const matcher = readMatcher(options) ?? stored.matcher;
    const scorer = new FileWriteScorer({ source: offlineSource(stored.observation) });
    const [score] = await scorer.scoreObservation({
      observation: stored.observation,
      expectation: expectation([contentWritten(stored.observation.scorable, matcher)]),
    });
    if (score === undefined) throw new Error('the scorer returned no score');
    if (options.json === true) printJson(io, { score });
    else io.out(`${renderScore(score)}\n${renderObservation(stored.observation)}\n`);
  });
}

interface ReplayInput {
  observation: Observation;
  /** The criterion of the stored score, reused when no matcher flag is given. */
  matcher?: Matcher | undefined;
}

async function readReplayFile(file: string): Promise<ReplayInput> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${file} is not valid JSON (${(error as Error).message}); give an Observation file`);
  }
  const isWrapper = json !== null && typeof json === 'object' && 'observation' in json && 'score' in json;
  if (isWrapper) {
    const result = ScoreOutputSchema.safeParse(json);
    if (!result.success)
      throw new UsageError(`${file} is not a valid score output: ${describeIssues(result.error).join('; ')}`);
    const condition = result.data.score.scoredExpectation.conditions[0];
    return { observation: result.data.observation, matcher: condition?.matcher };
  }
  const result = ObservationSchema.safeParse(json);
  if (!result.success)
    throw new UsageError(`${file} is not a valid Observation: ${describeIssues(result.error).join('; ')}`);
  return { observation: result.data };
}

/** Replay never reads the file system: this source only names who acquired the evidence. */
function offlineSource(observation: Observation): SurfaceSource {
  return {
    identifier: () => observation.sourceIdentifier,
    acquire: () => Promise.reject(new Error('replay never reads the file system')),
  };
}
