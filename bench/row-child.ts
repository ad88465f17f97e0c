import type { BenchConfig } from './config.js';
import { BENCHMARKS, type BenchNumber } from './suite.js';

/**
 * Runs one row of the suite in a process of its own and prints its rows as JSON on stdout (progress lines on
 * stderr). runSuite starts one per row, so that no row is timed in a heap, a page state or a compiled-code
 * state another row left behind: the garbage of row 8's campaigns, collected during row 9's acquisitions,
 * made 9b read 1.52× in a full run against 1.28–1.30× for the same build run alone. A row's numbers are
 * the same in a full run and under `--only`.
 *
 *   node dist/bench/row-child.js '{"number":2,"config":{...},"base":"/tmp/witness-bench"}'
 */

export interface RowChildRequest {
  number: BenchNumber;
  config: BenchConfig;
  base: string;
}

async function main(): Promise<void> {
  const request = JSON.parse(process.argv[2] ?? '') as RowChildRequest;
  const run = BENCHMARKS[request.number];
  if (run === undefined) throw new Error(`no bench row ${request.number}`);
  const rows = await run(request.config, {
    base: request.base,
    log: (line) => process.stderr.write(`${line}\n`),
  });
  process.stdout.write(`${JSON.stringify(rows)}\n`);
}

await main();
