import { contentWritten } from '../../src/models/condition.js';
import { expectation } from '../../src/models/expectation.js';
import { contains } from '../../src/models/matcher.js';
import type { Observation } from '../../src/models/observation.js';
import { surface } from '../../src/models/scorable.js';
import { FileWriteScorer } from '../../src/scorers/file-write-scorer.js';
import { LocalFileSurfaceSource } from '../../src/sources/local-file-source.js';
import { judgeContentWritten } from '../../src/verdicts/content-written.js';
import type { BenchConfig } from '../config.js';
import { interleave, median, timeAsync, timeSync } from '../measure.js';
import { atLeast, type BenchContext, type BenchRow, formatRate } from '../table.js';
import { ensureMainTree } from '../trees.js';

/**
 * Row 5: a stored observation (acquired once, kept as JSON) judged again with a matcher it was not
 * acquired for, through `FileWriteScorer.scoreObservation` (validates the observation and builds a score)
 * and through the pure verdict rule alone. The needle is absent, so every entry is searched in full.
 */
export async function benchReplay(config: BenchConfig, context: BenchContext): Promise<BenchRow[]> {
  const tree = ensureMainTree(context.base, config.mainTree.files, config.mainTree.directories);
  const uri = '/**';
  const source = new LocalFileSurfaceSource({
    root: tree.root,
    maxFiles: config.replay.entries,
    maxReadBytes: tree.bytes + 1,
  });
  let stored: string;
  try {
    stored = JSON.stringify(await source.acquire(surface(uri, 'glob')));
  } finally {
    await source.close();
  }
  const observation = JSON.parse(stored) as Observation;
  const entries = observation.payload.entries.length;
  const scorer = new FileWriteScorer({ source });
  const condition = contentWritten(surface(uri, 'glob'), contains('a needle no file holds'));
  const request = { observation, expectation: expectation([condition]) };
  const {
    scores: [check],
  } = await scorer.scoreObservation(request);
  const problems: string[] = [];
  if (entries !== Math.min(config.replay.entries, tree.files)) problems.push(`${entries} entries stored`);
  if (check?.status !== 'undetermined' && check?.status !== 'complete') problems.push('no score returned');
  context.log(`row 5: ${config.runs} rounds of ${config.replay.replays} replays × ${entries} entries`);
  const { replays } = config.replay;
  const times = await interleave(config.runs, {
    scorer: () =>
      timeAsync(async () => {
        for (let i = 0; i < replays; i++) await scorer.scoreObservation(request);
      }),
    verdict: () =>
      timeSync(() => {
        for (let i = 0; i < replays; i++) judgeContentWritten(observation, condition);
      }),
  });
  const rate = (ms: number) => (entries * replays) / (ms / 1000);
  const scorerRate = rate(median(times.scorer as number[]));
  const verdictRate = rate(median(times.verdict as number[]));
  const error = problems.length > 0 ? problems.join('; ') : undefined;
  return [
    {
      id: '5a',
      what: `replay: FileWriteScorer.scoreObservation, ${entries}-entry observation, new contains matcher`,
      witness: formatRate(scorerRate, 'entries'),
      baseline: '—',
      ratio: null,
      target: '≥ 100,000/s',
      verdict: error ? 'ERROR' : atLeast(scorerRate, 100_000),
      note: error ?? `${formatRate(scorerRate / entries, 'observations')}`,
    },
    {
      id: '5b',
      what: 'replay: judgeContentWritten alone (no validation, no score record)',
      witness: formatRate(verdictRate, 'entries'),
      baseline: '—',
      ratio: null,
      target: '≥ 100,000/s',
      verdict: error ? 'ERROR' : atLeast(verdictRate, 100_000),
    },
  ];
}
