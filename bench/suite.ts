import type { BenchConfig } from './config.js';
import { benchCampaignScale } from './rows/campaign-scale.js';
import { benchChangeEvidence } from './rows/change-evidence.js';
import { benchExactLatency } from './rows/exact-latency.js';
import { benchGlobAll } from './rows/glob-all.js';
import { benchHashing } from './rows/hashing.js';
import { benchMemory } from './rows/memory.js';
import { benchPrefixGlob } from './rows/prefix-glob.js';
import { benchQueue } from './rows/queue.js';
import { benchReplay } from './rows/replay.js';
import { benchSandbox } from './rows/sandbox.js';
import type { BenchContext, BenchRow } from './table.js';

/**
 * The six measurements of issue 6, the sandbox of issue 10, the campaign scale of issue 14, the change
 * evidence of issue 11 and the queue of issue 16, by row number.
 */
export const BENCHMARKS = {
  1: benchGlobAll,
  2: benchPrefixGlob,
  3: benchHashing,
  4: benchExactLatency,
  5: benchReplay,
  6: benchMemory,
  7: benchSandbox,
  8: benchCampaignScale,
  9: benchChangeEvidence,
  10: benchQueue,
} as const satisfies Record<number, (config: BenchConfig, context: BenchContext) => Promise<BenchRow[]>>;

export type BenchNumber = keyof typeof BENCHMARKS;
export const BENCH_NUMBERS = Object.keys(BENCHMARKS).map(Number) as BenchNumber[];

/** Runs the chosen rows one after another (never in parallel: they would measure each other). */
export async function runSuite(
  config: BenchConfig,
  context: BenchContext,
  only: readonly BenchNumber[] = BENCH_NUMBERS,
): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const number of only) rows.push(...(await BENCHMARKS[number](config, context)));
  return rows;
}
