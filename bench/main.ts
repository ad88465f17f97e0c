import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { type BenchConfig, FULL_CONFIG, QUICK_CONFIG } from './config.js';
import { describeMachine } from './machine.js';
import { BENCH_NUMBERS, type BenchNumber, runSuite } from './suite.js';
import { formatTable } from './table.js';

/**
 * `npm run bench [-- --quick] [--runs N] [--only 1,3] [--base DIR]`: generates (or reuses) the trees and
 * prints the table on stdout; progress goes to stderr. Not part of `npm test`; docs/benchmarks.md says how
 * to read it.
 */

const USAGE = 'usage: npm run bench -- [--quick] [--runs N] [--only 1,2,...] [--base DIR]';

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      runs: { type: 'string' },
      only: { type: 'string' },
      base: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const config: BenchConfig = { ...(values.quick ? QUICK_CONFIG : FULL_CONFIG) };
  if (values.runs !== undefined) {
    const runs = Number(values.runs);
    if (!Number.isSafeInteger(runs) || runs < 1)
      throw new Error(`--runs must be a positive integer\n${USAGE}`);
    config.runs = runs;
  }
  const only = values.only === undefined ? BENCH_NUMBERS : values.only.split(',').map(Number);
  for (const number of only) {
    if (!BENCH_NUMBERS.includes(number as BenchNumber)) {
      throw new Error(`--only takes row numbers among ${BENCH_NUMBERS.join(',')}\n${USAGE}`);
    }
  }
  const base = path.resolve(values.base ?? path.join(os.tmpdir(), 'witness-bench'));
  const log = (line: string) => process.stderr.write(`bench: ${line}\n`);
  log(`trees under ${base} (generated once, then reused)`);
  const rows = await runSuite(config, { base, log }, only as BenchNumber[]);
  process.stdout.write(
    `Witness benchmarks (${values.quick ? 'quick' : 'full'}, medians of ${config.runs} runs)\n` +
      `${describeMachine(base)}\n\n${formatTable(rows)}\n`,
  );
  return rows.some((row) => row.verdict === 'ERROR') ? 2 : 0;
}

process.exitCode = await main();
