import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEMO_ATTEMPTS, demoArchive, writeCopiedArchive } from '../../test/support/copied-archive.js';
import type { BenchConfig } from '../config.js';
import { median } from '../measure.js';
import { atMost, type BenchContext, type BenchRow, formatMiB, formatMs, formatRate } from '../table.js';
import { type AtSize, measureAtSizes } from './at-sizes.js';

const CHILD = fileURLToPath(new URL('../campaign-child.js', import.meta.url));
const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

/** Default sizes of row 14 (attempts in the archive), smallest first. */
export const ARCHIVE_ATTEMPTS = [1_000, 10_000];

interface Measured {
  attempts: number;
  records: number;
  archiveBytes: number;
  importMs: number;
  importPeak: number;
  exportMs: number;
  exportPeak: number;
}

/**
 * Row 14: `witness import` and `witness export` of an archive of N attempts (the demo run copied under
 * new ids: distinct conversations, observations and scores), each a fresh process on SQLite: throughput
 * (records per second) and peak RSS, against the same at the smallest size in the same run. Both stream,
 * so the peak RSS stays flat as the archive grows (target ≤ 1.2×), and so does the time per record.
 */
export async function benchArchive(config: BenchConfig, context: BenchContext): Promise<BenchRow[]> {
  let demo: string[] | undefined;
  const measured = await measureAtSizes<Measured>({
    sizes: config.archiveAttempts ?? ARCHIVE_ATTEMPTS,
    prefix: 'witness-bench-archive-',
    errorRow: { id: '14a', what: 'witness import / export of a large archive' },
    measure: async (attempts, dir) => {
      if (demo === undefined) {
        context.log('row 14: the demo run');
        demo = await demoArchive(path.join(dir, 'demo.db'), dir);
      }
      return measureArchive(config, context, dir, demo, attempts);
    },
  });
  if (!measured.ok) return measured.rows;
  const { results, first, last } = measured;
  const rate = (m: Measured, ms: number) => formatRate((m.records / ms) * 1000, 'records');
  const series = results
    .map(
      (m) =>
        `${m.attempts} attempts (${m.records} records, ${formatMiB(m.archiveBytes)}): import ${formatMs(m.importMs)} (${rate(m, m.importMs)}), peak ${formatMiB(m.importPeak)}; export ${formatMs(m.exportMs)} (${rate(m, m.exportMs)}), peak ${formatMiB(m.exportPeak)}`,
    )
    .join('; ');
  const perRecord = (m: Measured, ms: number) => ms / m.records;
  const importTime = perRecord(last, last.importMs) / perRecord(first, first.importMs);
  const exportTime = perRecord(last, last.exportMs) / perRecord(first, first.exportMs);
  const importRss = last.importPeak / first.importPeak;
  const exportRss = last.exportPeak / first.exportPeak;
  const versus = `${last.attempts} vs ${first.attempts} attempts`;
  return [
    {
      id: '14a',
      what: `witness import, time per record, ${versus}`,
      witness: rate(last, last.importMs),
      baseline: `${first.attempts} attempts ${rate(first, first.importMs)}`,
      ratio: importTime,
      target: '≤ 1.50×',
      verdict: atMost(importTime, 1.5),
      note: series,
    },
    {
      id: '14b',
      what: `witness import, peak RSS, ${versus}`,
      witness: formatMiB(last.importPeak),
      baseline: `${first.attempts} attempts ${formatMiB(first.importPeak)}`,
      ratio: importRss,
      target: '≤ 1.20×',
      verdict: atMost(importRss, 1.2),
    },
    {
      id: '14c',
      what: `witness export, time per record, ${versus}`,
      witness: rate(last, last.exportMs),
      baseline: `${first.attempts} attempts ${rate(first, first.exportMs)}`,
      ratio: exportTime,
      target: '≤ 1.50×',
      verdict: atMost(exportTime, 1.5),
    },
    {
      id: '14d',
      what: `witness export, peak RSS, ${versus}`,
      witness: formatMiB(last.exportPeak),
      baseline: `${first.attempts} attempts ${formatMiB(first.exportPeak)}`,
      ratio: exportRss,
      target: '≤ 1.20×',
      verdict: atMost(exportRss, 1.2),
    },
  ];
}

/** Import and export of an archive of `attempts` attempts (the demo run copied), up to 3 runs each. */
async function measureArchive(
  config: BenchConfig,
  context: BenchContext,
  dir: string,
  demo: readonly string[],
  attempts: number,
): Promise<AtSize<Measured>> {
  const archive = path.join(dir, `a${attempts}.jsonl`);
  await writeCopiedArchive(demo, archive, Math.ceil(attempts / DEMO_ATTEMPTS));
  const records = countRecords(archive);
  const imports: number[] = [];
  const exports: number[] = [];
  let importPeak = 0;
  let exportPeak = 0;
  for (let run = 0; run < Math.max(1, Math.min(config.runs, 3)); run++) {
    const db = path.join(dir, `m${attempts}-${run}.db`);
    context.log(`row 14: import and export of ${attempts} attempts (${records} records), run ${run + 1}`);
    const imported = timed(['import', archive, '--db', db]);
    if (imported.problem !== undefined)
      return { problem: `witness import (${attempts}): ${imported.problem}` };
    imports.push(imported.ms);
    importPeak = Math.max(importPeak, imported.peak);
    const exported = timed(['export', '--db', db], path.join(dir, `e${attempts}.jsonl`));
    if (exported.problem !== undefined)
      return { problem: `witness export (${attempts}): ${exported.problem}` };
    exports.push(exported.ms);
    exportPeak = Math.max(exportPeak, exported.peak);
    fs.rmSync(db, { force: true });
  }
  const archiveBytes = fs.statSync(archive).size;
  const importMs = median(imports);
  const exportMs = median(exports);
  return { measured: { attempts, records, archiveBytes, importMs, importPeak, exportMs, exportPeak } };
}

/** The records of an archive (its lines but the header and the closing line). */
function countRecords(file: string): number {
  const end = fs.readFileSync(file, 'utf8').trimEnd().split('\n').at(-1) as string;
  const counts = (JSON.parse(end) as { records: Record<string, number> }).records;
  return Object.values(counts).reduce((sum, n) => sum + n, 0);
}

/** A CLI command in a fresh process (stdout to `out`, else discarded): its time and peak RSS. */
function timed(args: string[], out?: string): { ms: number; peak: number; problem?: string } {
  const fd = fs.openSync(out ?? '/dev/null', 'w');
  try {
    const started = performance.now();
    const result = spawnSync(process.execPath, [CHILD, CLI, ...args], {
      stdio: ['ignore', fd, 'pipe'],
      encoding: 'utf8',
      env: { ...process.env, WITNESS_DB: undefined },
    });
    const ms = performance.now() - started;
    const peak = Number(/PEAK_RSS_KIB (\d+)/.exec(result.stderr)?.[1]) * 1024;
    if (result.status !== 0)
      return { ms, peak, problem: `exited ${result.status}: ${result.stderr.slice(-500)}` };
    return { ms, peak };
  } finally {
    fs.closeSync(fd);
  }
}
