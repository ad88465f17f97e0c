import { spawn } from 'node:child_process';
import { once } from 'node:events';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { BenchConfig } from './config.js';
import { benchArchive } from './rows/archive.js';
import { benchCampaignScale } from './rows/campaign-scale.js';
import { benchChangeEvidence } from './rows/change-evidence.js';
import { benchEvidenceStore } from './rows/evidence-store.js';
import { benchExactLatency } from './rows/exact-latency.js';
import { benchGlobAll } from './rows/glob-all.js';
import { benchHashing } from './rows/hashing.js';
import { benchMemory } from './rows/memory.js';
import { benchMemoryScale } from './rows/memory-scale.js';
import { benchNetwork } from './rows/network.js';
import { benchPrefixGlob } from './rows/prefix-glob.js';
import { benchQueue } from './rows/queue.js';
import { benchReplay } from './rows/replay.js';
import { benchReportScale } from './rows/report-scale.js';
import { benchSandbox } from './rows/sandbox.js';
import type { BenchContext, BenchRow } from './table.js';

/**
 * The rows by number: acquisition (1–6: the whole-tree glob, a prefix glob, hashing, exact latency and
 * start-up, replay, memory bounds), the sandbox (7), campaign scale (8), change evidence (9), the queue (10),
 * network: proxy (11), the report and the viewer over a large stored run (12), evidence content in the
 * memory (13), export and import (14), a hundred thousand attempts (15: the viewer and the report over
 * HTTP and in their own processes, bytes per attempt, campaign time).
 * docs/benchmarks.md describes each.
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
  11: benchNetwork,
  12: benchReportScale,
  13: benchEvidenceStore,
  14: benchArchive,
  15: benchMemoryScale,
} as const satisfies Record<number, (config: BenchConfig, context: BenchContext) => Promise<BenchRow[]>>;

export type BenchNumber = keyof typeof BENCHMARKS;
export const BENCH_NUMBERS = Object.keys(BENCHMARKS).map(Number) as BenchNumber[];

const ROW_CHILD = fileURLToPath(new URL('./row-child.js', import.meta.url));

/**
 * Runs the chosen rows one after another (never in parallel: they would measure each other), each in a
 * fresh process (bench/row-child.ts says why); a row's progress lines reach `context.log`.
 */
export async function runSuite(
  config: BenchConfig,
  context: BenchContext,
  only: readonly BenchNumber[] = BENCH_NUMBERS,
): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const number of only) rows.push(...(await runRowChild(number, config, context)));
  return rows;
}

async function runRowChild(
  number: BenchNumber,
  config: BenchConfig,
  context: BenchContext,
): Promise<BenchRow[]> {
  const request = JSON.stringify({ number, config, base: context.base });
  // The bench's own Node flags (e.g. --cpu-prof, --expose-gc) reach the row.
  const child = spawn(process.execPath, [...process.execArgv, ROW_CHILD, request], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  const lastLines: string[] = [];
  readline.createInterface({ input: child.stderr }).on('line', (line) => {
    context.log(line);
    lastLines.push(line);
    if (lastLines.length > 20) lastLines.shift();
  });
  const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
  if (code !== 0) {
    throw new Error(
      `bench row ${number} failed (${signal ?? `exit ${code}`}); its last lines:\n${lastLines.join('\n')}`,
    );
  }
  try {
    return JSON.parse(stdout) as BenchRow[];
  } catch (error) {
    throw new Error(`bench row ${number} printed something other than its rows' JSON: ${String(error)}`);
  }
}
