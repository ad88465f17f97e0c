import { fileURLToPath } from 'node:url';
import type { ChildReport, ChildRequest } from '../acquire-child.js';
import type { BenchConfig } from '../config.js';
import { median, timeCommand } from '../measure.js';
import { type BenchContext, type BenchRow, formatMiB } from '../table.js';
import { ensureEntriesTree, ensureMainTree } from '../trees.js';

const CHILD = fileURLToPath(new URL('../acquire-child.js', import.meta.url));

function runChild(request: ChildRequest): ChildReport {
  const result = timeCommand(process.execPath, [CHILD, JSON.stringify(request)]);
  if (result.status !== 0) throw new Error(`acquire-child exited ${result.status}: ${result.stderr.trim()}`);
  return JSON.parse(result.stdout) as ChildReport;
}

/**
 * Row 6: peak RSS of one acquisition, each in a fresh child process, over a tree of 1,000,000 listed entries
 * and over the ten-times-smaller main tree, default budgets. Bounded by the budgets means both stop at the
 * same budget and peak at about the same memory. `/**\/*.none` matches nothing, so the walk lists until
 * maxListedEntries stops it; `/**` reads files until maxFiles stops it.
 */
export async function benchMemory(config: BenchConfig, context: BenchContext): Promise<BenchRow[]> {
  const big = ensureEntriesTree(
    context.base,
    config.entriesTree.directories,
    config.entriesTree.filesPerDirectory,
  );
  const small = ensureMainTree(context.base, config.mainTree.files, config.mainTree.directories);
  const limits = config.memoryLimits;
  const budgets = Object.keys(limits).length === 0 ? 'default budgets' : JSON.stringify(limits);
  const rows: BenchRow[] = [];
  context.log(`row 6: child processes over ${big.root} and ${small.root}`);
  const idle = median(
    Array.from(
      { length: config.runs },
      () => runChild({ root: small.root, uri: '/absent', match: 'exact', limits }).peakRssKiB,
    ),
  );
  const smallEntries = small.files + small.directories;
  for (const [id, uri, stop] of [
    ['6a', '/**/*.none', 'listing_limit_exceeded'],
    ['6b', '/**', 'file_limit_exceeded'],
  ] as const) {
    const bigReports = Array.from({ length: config.runs }, () =>
      runChild({ root: big.root, uri, match: 'glob', limits }),
    );
    const smallReports = Array.from({ length: config.runs }, () =>
      runChild({ root: small.root, uri, match: 'glob', limits }),
    );
    const bigPeak = median(bigReports.map((r) => r.peakRssKiB)) * 1024;
    const smallPeak = median(smallReports.map((r) => r.peakRssKiB)) * 1024;
    const last = bigReports.at(-1) as ChildReport;
    const stopped =
      last.reasons.includes(stop) && (smallReports.at(-1) as ChildReport).reasons.includes(stop);
    const ratio = bigPeak / smallPeak;
    rows.push({
      id,
      what: `peak RSS, glob ${uri} over ${big.entries.toLocaleString('en-US')} entries, ${budgets}`,
      witness: formatMiB(bigPeak),
      baseline: `same over ${smallEntries.toLocaleString('en-US')} entries ${formatMiB(smallPeak)}`,
      ratio,
      target: '≤ 1.20× (bounded)',
      verdict: !stopped ? 'ERROR' : ratio <= 1.2 ? 'PASS' : 'MISS',
      note: `stopped by ${last.reasons.join(', ') || 'nothing'} after ${last.stats.entriesExamined} entries examined, ${last.stats.filesRead} files read; a process doing one absent exact acquisition peaks at ${formatMiB(idle * 1024)}`,
    });
  }
  return rows;
}
