import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import * as z from 'zod';
import type { Memory } from '../../memory/memory.js';
import { conditionMatcher, contentWritten } from '../../models/condition.js';
import { expectation } from '../../models/expectation.js';
import type { Matcher } from '../../models/matcher.js';
import { type Observation, ObservationSchema } from '../../models/observation.js';
import { describeIssues } from '../../models/record.js';
import type { Scorable } from '../../models/scorable.js';
import { type Score, ScoreSchema } from '../../models/score.js';
import { replayObservation } from '../../scorers/file-write-scorer.js';
import type { ScorerMemory } from '../../scorers/scorer.js';
import { matcherOptions, readMatcher } from '../flags.js';
import { type CliIo, printJson } from '../io.js';
import { dbOption, optionalDb, READ_ONLY, resolveDb, withMemory } from '../memory-option.js';
import { excerpt, renderObservation, renderScore } from '../render.js';
import { UsageError } from '../usage-error.js';

/** A replay file is an Observation, or the `{ score, observation }` that `witness score --json` prints. */
const ScoreOutputSchema = z.strictObject({ score: ScoreSchema, observation: ObservationSchema });

export function registerReplay(program: Command, io: CliIo): void {
  const command = program
    .command('replay')
    .description('judge stored evidence again, offline, optionally with a new text criterion')
    .argument('[observation.json]', 'an Observation, or the output of `witness score --json`')
    .option('--observation <id>', 'replay the observation stored under this id in the memory')
    .option('--score <id>', 'replay a stored score: its observation, what it was about, and its criterion');
  for (const option of matcherOptions()) command.addOption(option);
  command.addOption(dbOption());
  command.option('--json', 'print { score } as JSON');
  command.action(async (file: string | undefined, options: Record<string, unknown>) => {
    const fromMemory = [options.observation, options.score].filter((id) => typeof id === 'string').length;
    if (fromMemory + (file === undefined ? 0 : 1) !== 1) {
      throw new UsageError(
        'name the evidence to replay once: an <observation.json> file, --observation ID or --score ID (with --db)',
      );
    }
    const flagMatcher = readMatcher(options);
    if (file !== undefined) {
      const stored = await readReplayFile(file);
      const db = optionalDb(options, io.env);
      const input = { ...stored, matcher: flagMatcher ?? stored.matcher };
      const score =
        db === undefined
          ? await replay(input, undefined)
          : await withMemory(db, (memory) => replay(input, memory), READ_ONLY);
      if (db !== undefined) io.err(storedLine(score, db));
      print(io, options, score, stored.observation);
      return;
    }
    await withMemory(
      resolveDb(options, io.env),
      async (memory) => {
        if (typeof options.score === 'string') {
          // A score `witness run` decided with change evidence is replayed with it (bait rule included).
          const { replayAttemptScore } = await import('../../attacks/replay-attempt.js');
          const stored = await memory.getScore(options.score);
          const replayed = await replayAttemptScore(memory, stored, flagMatcher);
          if (replayed !== null) {
            io.err(storedLine(replayed, memory.location.target));
            const [observation] = await memory.observationsForScore(options.score);
            if (options.json === true) printJson(io, { score: replayed });
            else if (observation === undefined) io.out(`${renderScore(replayed)}\n`);
            else print(io, options, replayed, observation);
            return;
          }
        }
        const input = await readStoredEvidence(memory, options);
        const score = await replay({ ...input, matcher: flagMatcher ?? input.matcher }, memory);
        io.err(storedLine(score, memory.location.target));
        print(io, options, score, input.observation);
      },
      READ_ONLY,
    );
  });
}

/** Judges the evidence again; with a memory, the new score is stored next to the evidence it rests on. */
async function replay(input: ReplayInput, memory: ScorerMemory | undefined): Promise<Score> {
  const {
    scores: [score],
  } = await replayObservation(
    {
      observation: input.observation,
      expectation: expectation([contentWritten(input.observation.scorable, input.matcher)], input.objective),
      scorable: input.scorable,
    },
    { memory },
  );
  if (score === undefined) throw new Error('the scorer returned no score: a bug');
  return score;
}

function storedLine(score: Score, db: string): string {
  return `stored score ${score.id} in ${excerpt(db, 300)} (witness scores show ${score.id})\n`;
}

function print(io: CliIo, options: Record<string, unknown>, score: Score, observation: Observation): void {
  if (options.json === true) printJson(io, { score });
  else io.out(`${renderScore(score)}\n${renderObservation(observation)}\n`);
}

/** `--observation ID` or `--score ID`: the stored evidence, and for a score what it was about and asked. */
async function readStoredEvidence(memory: Memory, options: Record<string, unknown>): Promise<ReplayInput> {
  if (typeof options.observation === 'string') {
    return { observation: await memory.getObservation(options.observation) };
  }
  const id = String(options.score);
  const score = await memory.getScore(id);
  const observations = await memory.observationsForScore(id);
  const [observation] = observations;
  if (observation === undefined || observations.length !== 1) {
    throw new UsageError(
      `score ${id} rests on ${observations.length} observations, so there is no single piece of evidence to replay${observations.length === 0 ? ` (it was decided without reading: ${score.rationale})` : '; replay one with --observation ID'}`,
    );
  }
  const condition = score.scoredExpectation.conditions[0];
  return {
    observation,
    matcher: conditionMatcher(condition),
    scorable: score.scorable,
    objective: score.scoredExpectation.objective,
  };
}

interface ReplayInput {
  observation: Observation;
  /** The criterion of the stored score, reused when no matcher flag is given. */
  matcher?: Matcher | undefined;
  /** What the replayed score is about (a stored score's scorable); defaults to the observation's surface. */
  scorable?: Scorable | undefined;
  objective?: string | undefined;
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
    return { observation: result.data.observation, matcher: conditionMatcher(condition) };
  }
  const result = ObservationSchema.safeParse(json);
  if (!result.success)
    throw new UsageError(`${file} is not a valid Observation: ${describeIssues(result.error).join('; ')}`);
  return { observation: result.data };
}
