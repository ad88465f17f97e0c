import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { BenchConfig } from '../config.js';
import { median, percentile, timeCommand } from '../measure.js';
import { atMost, type BenchContext, type BenchRow, formatMiB, formatMs } from '../table.js';
import { campaignYaml } from './campaign-scale.js';
import { copyAttempts } from './copy-attempts.js';
import { QUEUE_BENCH_URL_VARIABLES } from './queue.js';
import { storeRun } from './report-scale.js';

const CHILD = fileURLToPath(new URL('../campaign-child.js', import.meta.url));
const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

/** Default sizes of row 15: the stored run the viewer and the report read, the two campaign sizes. */
export const MEMORY_SCALE = { storedAttempts: 100_000, campaignAttempts: [1_000, 10_000], requests: 50 };

/** What the viewer and the report cost over one stored memory. */
interface Opened {
  attempts: number;
  indexMs: number[];
  runPageMs: number[];
  viewerPeakBytes: number;
  reportMs: number;
  reportPeakBytes: number;
  reportBytes: number;
}

/**
 * Row 15: a hundred thousand attempts. (a) `witness run` of a mock campaign (fresh processes, SQLite) at
 * two sizes: time per attempt, which should stay flat, and the memory file's bytes per attempt of the
 * larger run (target ≤ 3 KB). (b) A stored run of N attempts (the demo run's records stored again under
 * new attempt numbers through the Memory API up to 2,000, then those rows copied in SQL; on SQLite, and on PostgreSQL when
 * WITNESS_BENCH_PG_URL or WITNESS_TEST_PG_URL is given) opened as a person would: `witness view` in its own
 * process, its index and the run's page fetched over HTTP (p50, p99, and the viewer's peak RSS), and
 * `witness report --latest` (time, peak RSS, size); each against the same measured on a run of N/10 in
 * the same bench. Targets: pages p50 < 200 ms and p99 < 1 s, viewer < 300 MB; report < 10 s and < 300 MB.
 */
export async function benchMemoryScale(config: BenchConfig, context: BenchContext): Promise<BenchRow[]> {
  const scale = { ...MEMORY_SCALE, ...config.memoryScale };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'witness-bench-scale-'));
  const rows: BenchRow[] = [];
  try {
    rows.push(...campaignRows(scale.campaignAttempts, dir, context));
    const small = Math.max(8, Math.round(scale.storedAttempts / 10));
    const opened: Record<string, Opened> = {};
    for (const attempts of [small, scale.storedAttempts]) {
      const db = path.join(dir, `s${attempts}.db`);
      context.log(`row 15: storing ${attempts} attempts (SQLite)`);
      const runId = await storeLargeRun(db, attempts, path.join(dir, `w${attempts}`));
      opened[attempts] = await open(db, runId, attempts, scale.requests, dir, context);
    }
    rows.push(...openedRows('SQLite', opened[small] as Opened, opened[scale.storedAttempts] as Opened, 'd'));
    rows.push(...(await postgresRows(scale.storedAttempts, scale.requests, dir, context)));
  } catch (error) {
    rows.push(errorRow('15', `a hundred thousand attempts: ${(error as Error).message}`));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

/** Attempts stored through the Memory API before the rest are copied in SQL. */
const STORED_THROUGH_API = 2_000;

/**
 * A run of `attempts` attempts at `target`: the first (at most 2,000) stored through the Memory API (see
 * report-scale.ts), the rest copied from them in SQL (copy-attempts.ts).
 */
async function storeLargeRun(target: string, attempts: number, workspaces: string): Promise<string> {
  const runId = await storeRun(target, Math.min(attempts, STORED_THROUGH_API), workspaces, attempts);
  await copyAttempts(target, runId, attempts);
  return runId;
}

/** 15a-b: the campaign at two sizes, and the bytes per attempt of the larger one's memory. */
function campaignRows(sizes: readonly number[], dir: string, context: BenchContext): BenchRow[] {
  const results: { attempts: number; msPerAttempt: number; bytes: number }[] = [];
  for (const attempts of sizes) {
    const file = path.join(dir, `c${attempts}.yaml`);
    fs.writeFileSync(file, campaignYaml(attempts / 2));
    const db = path.join(dir, `c${attempts}.db`);
    context.log(`row 15: witness run of ${attempts} mock attempts`);
    const result = timeCommand(process.execPath, [CHILD, CLI, 'run', file, '--db', db, '--json']);
    if (result.status !== 0) {
      return [
        errorRow('15a', `witness run (${attempts}) exited ${result.status}: ${result.stderr.slice(-500)}`),
      ];
    }
    results.push({ attempts, msPerAttempt: result.ms / attempts, bytes: fileBytes(db) });
  }
  const first = results[0];
  const last = results.at(-1);
  if (first === undefined || last === undefined) return [errorRow('15a', 'no campaign size given')];
  const ratio = last.msPerAttempt / first.msPerAttempt;
  const perAttempt = last.bytes / last.attempts;
  return [
    {
      id: '15a',
      what: `witness run, time per attempt, ${last.attempts} vs ${first.attempts} mock attempts`,
      witness: formatMs(last.msPerAttempt),
      baseline: `${first.attempts} attempts ${formatMs(first.msPerAttempt)}`,
      ratio,
      target: '≤ 1.20× (flat)',
      verdict: atMost(ratio, 1.2),
    },
    {
      id: '15b',
      what: `memory file per attempt after witness run of ${last.attempts} mock attempts (SQLite)`,
      witness: `${(perAttempt / 1024).toFixed(2)} KiB`,
      baseline: `${first.attempts} attempts ${(first.bytes / first.attempts / 1024).toFixed(2)} KiB`,
      ratio: perAttempt / (first.bytes / first.attempts),
      target: '≤ 3 KiB per attempt',
      verdict: atMost(perAttempt, 3 * 1024),
      note: `${formatMiB(last.bytes)} for ${last.attempts} attempts`,
    },
  ];
}

/** The database file with its WAL, as it lies on disk after the run. */
function fileBytes(db: string): number {
  let bytes = 0;
  for (const suffix of ['', '-wal']) {
    try {
      bytes += fs.statSync(`${db}${suffix}`).size;
    } catch {
      // No WAL left: the last connection checkpointed it.
    }
  }
  return bytes;
}

/** The viewer (its own process, over HTTP) and the report over the memory at `db`. */
async function open(
  db: string,
  runId: string,
  attempts: number,
  requests: number,
  dir: string,
  context: BenchContext,
): Promise<Opened> {
  context.log(`row 15: witness view over ${attempts} attempts`);
  const viewer = await startViewer(db);
  const indexMs: number[] = [];
  const runPageMs: number[] = [];
  let viewerPeakBytes: number;
  try {
    for (let round = 0; round < requests; round++) {
      indexMs.push(await viewer.time('/'));
      runPageMs.push(await viewer.time(`/runs/${encodeURIComponent(runId)}`));
    }
    viewerPeakBytes = peakBytes(viewer.child.pid as number);
  } finally {
    viewer.child.kill('SIGTERM');
    await once(viewer.child, 'close');
  }
  context.log(`row 15: witness report over ${attempts} attempts`);
  const out = path.join(dir, `report-${attempts}.html`);
  const report = timeCommand(process.execPath, [CHILD, CLI, 'report', '--db', db, '--latest', '--out', out]);
  if (report.status !== 0)
    throw new Error(`witness report exited ${report.status}: ${report.stderr.slice(-500)}`);
  return {
    attempts,
    indexMs,
    runPageMs,
    viewerPeakBytes,
    reportMs: report.ms,
    reportPeakBytes: Number(/PEAK_RSS_KIB (\d+)/.exec(report.stderr)?.[1]) * 1024,
    reportBytes: fs.statSync(out).size,
  };
}

interface Viewer {
  child: ChildProcess;
  /** Milliseconds from request to the last byte of the page (which must be a 200). */
  time(pathname: string): Promise<number>;
}

/** `witness view --db` in a child process, past its token (the cookie it sets is sent with each page). */
async function startViewer(db: string): Promise<Viewer> {
  const child = spawn(process.execPath, [CLI, 'view', '--db', db], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const lines = readline.createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const [first] = (await Promise.race([
    once(lines, 'line'),
    once(child, 'close').then(() => {
      throw new Error(`witness view ended before printing its URL: ${stderr.slice(-500)}`);
    }),
  ])) as [string];
  const url = new URL(first.trim());
  const entry = await fetch(url, { redirect: 'manual' });
  const cookie = (entry.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  await entry.arrayBuffer();
  return {
    child,
    async time(pathname) {
      const started = performance.now();
      const response = await fetch(new URL(pathname, url.origin), { headers: { cookie } });
      await response.arrayBuffer();
      const ms = performance.now() - started;
      if (response.status !== 200)
        throw new Error(`witness view answered ${pathname} with ${response.status}`);
      return ms;
    },
  };
}

/** A live process's peak resident memory (VmHWM covers every thread). */
function peakBytes(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmHWM:\s+(\d+)\s+kB/m.exec(status)?.[1]) * 1024;
}

/** The viewer and report rows of one backend, the large run against the small one (ids from `letter`). */
function openedRows(backend: string, small: Opened, large: Opened, letter: string): BenchRow[] {
  const start = letter.charCodeAt(0);
  const id = (offset: number) => `15${String.fromCharCode(start + offset)}`;
  const vs = `${large.attempts} vs ${small.attempts} stored attempts, ${backend}`;
  const pages = (name: string, big: number[], little: number[], offset: number): BenchRow[] => [
    {
      id: id(offset),
      what: `witness view, ${name} p50, ${vs}`,
      witness: formatMs(median(big)),
      baseline: `${small.attempts} attempts ${formatMs(median(little))}`,
      ratio: median(big) / median(little),
      target: '< 200 ms',
      verdict: atMost(median(big), 200),
      note: `${big.length} requests`,
    },
    {
      id: id(offset + 1),
      what: `witness view, ${name} p99, ${vs}`,
      witness: formatMs(percentile(big, 99)),
      baseline: `${small.attempts} attempts ${formatMs(percentile(little, 99))}`,
      ratio: percentile(big, 99) / percentile(little, 99),
      target: '< 1 s',
      verdict: atMost(percentile(big, 99), 1000),
    },
  ];
  return [
    ...pages('index (list of runs)', large.indexMs, small.indexMs, 0),
    ...pages('run page', large.runPageMs, small.runPageMs, 2),
    {
      id: id(4),
      what: `witness view, peak RSS after the pages, ${vs}`,
      witness: formatMiB(large.viewerPeakBytes),
      baseline: `${small.attempts} attempts ${formatMiB(small.viewerPeakBytes)}`,
      ratio: large.viewerPeakBytes / small.viewerPeakBytes,
      target: '< 300 MB',
      verdict: atMost(large.viewerPeakBytes, 300e6),
    },
    {
      id: id(5),
      what: `witness report --latest, time, ${vs}`,
      witness: formatMs(large.reportMs),
      baseline: `${small.attempts} attempts ${formatMs(small.reportMs)}`,
      ratio: large.reportMs / small.reportMs,
      target: '< 10 s',
      verdict: atMost(large.reportMs, 10_000),
      note: `${formatMiB(large.reportBytes)} of HTML (${formatMiB(small.reportBytes)} for the small run)`,
    },
    {
      id: id(6),
      what: `witness report --latest, peak RSS, ${vs}`,
      witness: formatMiB(large.reportPeakBytes),
      baseline: `${small.attempts} attempts ${formatMiB(small.reportPeakBytes)}`,
      ratio: large.reportPeakBytes / small.reportPeakBytes,
      target: '< 300 MB',
      verdict: atMost(large.reportPeakBytes, 300e6),
    },
  ];
}

/** The same on PostgreSQL (a database made for the bench and dropped after), when a server is given. */
async function postgresRows(
  storedAttempts: number,
  requests: number,
  dir: string,
  context: BenchContext,
): Promise<BenchRow[]> {
  const server = QUEUE_BENCH_URL_VARIABLES.map((name) => process.env[name]).find((url) => url);
  if (server === undefined) {
    return [
      {
        id: '15k',
        what: `the viewer and the report over ${storedAttempts} stored attempts, PostgreSQL`,
        witness: '—',
        baseline: '—',
        ratio: null,
        target: '—',
        verdict: 'n/a',
        note: 'skipped: no PostgreSQL — set WITNESS_BENCH_PG_URL (or WITNESS_TEST_PG_URL) to a server where the bench may create a database',
      },
    ];
  }
  const opened: Opened[] = [];
  const made: string[] = [];
  try {
    for (const attempts of [Math.max(8, Math.round(storedAttempts / 10)), storedAttempts]) {
      const name = `witness_bench_scale_${process.pid}_${attempts}`;
      await admin(server, `create database ${name}`);
      made.push(name);
      const url = new URL(server);
      url.pathname = `/${name}`;
      context.log(`row 15: storing ${attempts} attempts (PostgreSQL)`);
      const runId = await storeLargeRun(url.toString(), attempts, path.join(dir, `pg${attempts}`));
      opened.push(await open(url.toString(), runId, attempts, requests, dir, context));
    }
  } finally {
    for (const name of made) await admin(server, `drop database if exists ${name}`);
  }
  return openedRows('PostgreSQL', opened[0] as Opened, opened[1] as Opened, 'k');
}

async function admin(server: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: server });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

function errorRow(id: string, note: string): BenchRow {
  return {
    id,
    what: 'a hundred thousand attempts',
    witness: '—',
    baseline: '—',
    ratio: null,
    target: '—',
    verdict: 'ERROR',
    note,
  };
}
