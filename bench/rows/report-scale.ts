import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { demoCampaign } from '../../src/attacks/demo-campaign.js';
import { MemoryAttemptRecorder } from '../../src/attacks/memory-recorder.js';
import { runCampaign } from '../../src/attacks/run-campaign.js';
import { openMemoryReader } from '../../src/memory/memory-reader.js';
import { openMemory } from '../../src/memory/open-memory.js';
import type { AttemptRecord } from '../../src/models/attempt-record.js';
import { MockAgentTarget } from '../../src/targets/mock-agent-target.js';
import { ViewReadModel } from '../../src/view/read-model.js';
import type { BenchConfig } from '../config.js';
import { median, timeCommand } from '../measure.js';
import { atMost, type BenchContext, type BenchRow, formatMiB, formatMs } from '../table.js';
import { type AtSize, measureAtSizes } from './at-sizes.js';

const CHILD = fileURLToPath(new URL('../campaign-child.js', import.meta.url));
const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

/** Default sizes of row 12 (attempts stored in the memory the report and the viewer read). */
export const REPORT_SCALE_ATTEMPTS = [2_000, 20_000];

interface Measured {
  attempts: number;
  reportMs: number;
  peakBytes: number;
  htmlBytes: number;
  /** Median time of the viewer's index, run summary and first page of attempts, read in this process. */
  viewMs: number;
}

/**
 * Row 12: what a person opens after a large run — `witness report --latest` (a fresh process: time, peak
 * RSS, size of the HTML) and the viewer's read model (the list of runs, a run's summary and its first page
 * of attempts) — over a SQLite memory holding the demo run against the vulnerable mock, its attempts
 * stored again and again under new numbers until the run holds N attempts (half of them successes),
 * against a memory of the smallest size measured in the same run. The report counts by SQL and reads only
 * the attempts it shows (at most 50 cards per kind, 500 compact rows), so its time and memory should stay
 * nearly flat as the run grows (targets: time ≤ 2×, peak RSS ≤ 1.2× from the smallest to the largest).
 */
export async function benchReportScale(config: BenchConfig, context: BenchContext): Promise<BenchRow[]> {
  const measured = await measureAtSizes<Measured>({
    sizes: config.reportAttempts ?? REPORT_SCALE_ATTEMPTS,
    prefix: 'witness-bench-report-',
    errorRow: { id: '12a', what: 'witness report of a large run' },
    measure: (attempts, dir) => measureReport(config, context, dir, attempts),
  });
  if (!measured.ok) return measured.rows;
  const { results, first, last } = measured;
  const series = results
    .map(
      (r) =>
        `${r.attempts}: report ${formatMs(r.reportMs)}, peak ${formatMiB(r.peakBytes)}, ${formatMiB(r.htmlBytes)} of HTML; viewer ${formatMs(r.viewMs)}`,
    )
    .join('; ');
  const timeRatio = last.reportMs / first.reportMs;
  const rssRatio = last.peakBytes / first.peakBytes;
  const viewRatio = last.viewMs / first.viewMs;
  return [
    {
      id: '12a',
      what: `witness report --latest, time, ${last.attempts} vs ${first.attempts} stored attempts`,
      witness: formatMs(last.reportMs),
      baseline: `${first.attempts} attempts ${formatMs(first.reportMs)}`,
      ratio: timeRatio,
      target: '≤ 2.00×',
      verdict: atMost(timeRatio, 2),
      note: series,
    },
    {
      id: '12b',
      what: `witness report --latest, peak RSS, ${last.attempts} vs ${first.attempts} stored attempts`,
      witness: formatMiB(last.peakBytes),
      baseline: `${first.attempts} attempts ${formatMiB(first.peakBytes)}`,
      ratio: rssRatio,
      target: '≤ 1.20×',
      verdict: atMost(rssRatio, 1.2),
    },
    {
      id: '12c',
      what: `viewer: runs list + run summary + first page of attempts, ${last.attempts} vs ${first.attempts} stored attempts`,
      witness: formatMs(last.viewMs),
      baseline: `${first.attempts} attempts ${formatMs(first.viewMs)}`,
      ratio: viewRatio,
      target: 'info (counts scan the run)',
      verdict: 'info',
    },
  ];
}

/** `witness report --latest` (up to 3 runs) and the viewer's read model over a run of `attempts`. */
async function measureReport(
  config: BenchConfig,
  context: BenchContext,
  dir: string,
  attempts: number,
): Promise<AtSize<Measured>> {
  const db = path.join(dir, `r${attempts}.db`);
  context.log(`row 12: storing ${attempts} mock attempts`);
  await storeRun(db, attempts, path.join(dir, `w${attempts}`));
  const out = path.join(dir, `r${attempts}.html`);
  context.log(`row 12: witness report of ${attempts} attempts`);
  const times: number[] = [];
  let peak = 0;
  for (let run = 0; run < Math.max(1, Math.min(config.runs, 3)); run++) {
    const result = timeCommand(process.execPath, [
      CHILD,
      CLI,
      'report',
      '--db',
      db,
      '--latest',
      '--out',
      out,
    ]);
    if (result.status !== 0) {
      return {
        problem: `witness report (${attempts}) exited ${result.status}: ${result.stderr.slice(-500)}`,
      };
    }
    times.push(result.ms);
    peak = Math.max(peak, Number(/PEAK_RSS_KIB (\d+)/.exec(result.stderr)?.[1]) * 1024);
  }
  const viewTimes = await timeViewer(db, Math.max(3, config.runs));
  return {
    measured: {
      attempts,
      reportMs: median(times),
      peakBytes: peak,
      htmlBytes: fs.statSync(out).size,
      viewMs: median(viewTimes),
    },
  };
}

/**
 * A memory at `db` (a SQLite file or a postgres:// URL) holding one run of `attempts` attempts, whose id
 * is returned: the demo run against the vulnerable mock (8 attempts: successes, undetermined, a clean
 * control), its attack results stored again under new attempt numbers through the Memory API (the copies
 * rest on the demo's conversations, scores and observations). Rows 12 and 14 build their memories so.
 * The run record says `declaredAttempts` per run (row 15 copies the attempts further in SQL).
 */
export async function storeRun(
  db: string,
  attempts: number,
  workspaces: string,
  declaredAttempts: number = attempts,
): Promise<string> {
  fs.mkdirSync(workspaces, { recursive: true });
  const memory = await openMemory(db);
  try {
    const recorder = new MemoryAttemptRecorder(memory);
    // Stored with its scores and evidence, which the copies rest on.
    const demo = await runCampaign({
      campaign: demoCampaign('vulnerable'),
      target: new MockAgentTarget({ mode: 'vulnerable' }),
      workspaceParent: workspaces,
      recorder,
    });
    const perAttack = Math.ceil(declaredAttempts / demo.run.attacks.length);
    const run = {
      ...demo.run,
      runId: `${demo.run.runId}-scale`,
      attacks: demo.run.attacks.map((attack) => ({ ...attack, attempts: perAttack })),
    };
    await recorder.startRun(run);
    const per = demo.attempts.length;
    for (let index = 0; index < attempts; index++) {
      const source = demo.attempts[index % per] as AttemptRecord;
      const copy = Math.floor(index / per);
      const record: AttemptRecord = {
        ...source,
        runId: run.runId,
        attempt: source.attempt + copy * (per / demo.run.attacks.length),
      };
      await recorder.recordAttempt(record, run);
    }
    return run.runId;
  } finally {
    await memory.close();
  }
}

/** Times the viewer's read model on `db`: the list of runs, the latest run's summary and first page. */
async function timeViewer(db: string, runs: number): Promise<number[]> {
  const reader = await openMemoryReader(db);
  const model = new ViewReadModel(reader);
  const times: number[] = [];
  try {
    for (let round = 0; round < runs; round++) {
      const started = performance.now();
      const list = await model.listRuns();
      const latest = list[0];
      if (latest !== undefined) {
        const summary = await model.getRun(latest.run.runId);
        if (summary !== undefined) await model.pageAttempts(summary.run, {});
      }
      times.push(performance.now() - started);
    }
  } finally {
    await reader.close();
  }
  return times;
}
