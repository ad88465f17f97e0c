import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BenchConfig } from '../../bench/config.js';
import { median, percentile } from '../../bench/measure.js';
import { QUEUE_BENCH_URL_VARIABLES } from '../../bench/rows/queue.js';
import { runSuite } from '../../bench/suite.js';
import { type BenchRow, formatTable } from '../../bench/table.js';

/** Row 14 runs on PostgreSQL too when the bench is given a server. */
const POSTGRES_GIVEN = QUEUE_BENCH_URL_VARIABLES.some((name) => Boolean(process.env[name]));

/** Small enough to run in a couple of seconds, large enough that every budget in row 6 still stops the walk. */
const TINY_CONFIG: BenchConfig = {
  runs: 1,
  mainTree: { files: 200, directories: 20 },
  bigFileSizesMiB: [1, 2],
  exactCalls: 20,
  exactWarmupCalls: 5,
  prefixWarmupCalls: 2,
  cliRuns: 1,
  replay: { entries: 50, replays: 2 },
  entriesTree: { directories: 5, filesPerDirectory: 50 },
  memoryLimits: { maxListedEntries: 100, maxFiles: 20 },
  campaignAttempts: [2, 4],
  changeTree: { files: 100, directories: 5 },
  queue: { attempts: 4, workerCounts: [1, 2] },
  networkAttempts: 2,
  networkRequests: 200,
  reportAttempts: [16, 64],
  evidenceStore: { observations: 40, contentKiB: 40, controlMiB: 1 },
  archiveAttempts: [8, 32],
  memoryScale: { storedAttempts: 80, campaignAttempts: [2, 4], requests: 3 },
};

describe('npm run bench (on tiny trees)', () => {
  let base: string;
  let rows: BenchRow[];

  before(async () => {
    base = fs.mkdtempSync(path.join(os.tmpdir(), 'witness-bench-test-'));
    // Row 7b's `sandbox: none` campaign runs its agent as an unprivileged uid of its own when the tests
    // run as root: it must be able to search the directories above its workspace, as under `npm run bench`.
    fs.chmodSync(base, 0o711);
    rows = await runSuite(TINY_CONFIG, { base, log: () => {} });
  });

  after(() => fs.rmSync(base, { recursive: true, force: true }));

  it('builds every row, in order', () => {
    assert.deepEqual(
      rows.map((row) => row.id),
      [
        '1a',
        '1b',
        '1c',
        '1d',
        '1e',
        '1f',
        '2a',
        '2b',
        '3a',
        '3b',
        '4a',
        '4b',
        '4c',
        '4d',
        '4e',
        '5a',
        '5b',
        '6a',
        '6b',
        '7a',
        '7b',
        '8a',
        '8b',
        '9a',
        '9b',
        '9c',
        '10a',
        '10b',
        '10c',
        '11a',
        '11b',
        '12a',
        '12b',
        '12c',
        '13a',
        '13b',
        '13c',
        '14a',
        '14b',
        '14c',
        '14d',
        '15a',
        '15b',
        ...['d', 'e', 'f', 'g', 'h', 'i', 'j'].map((letter) => `15${letter}`),
        ...(POSTGRES_GIVEN ? ['k', 'l', 'm', 'n', 'o', 'p', 'q'] : ['k']).map((letter) => `15${letter}`),
      ],
    );
  });

  it('finds nothing wrong with what it measured (complete acquisitions, budgets that stop the walk)', () => {
    const errors = rows.filter((row) => row.verdict === 'ERROR').map((row) => `${row.id}: ${row.note}`);
    assert.deepEqual(errors, []);
  });

  it('judges every row that has a target, and lists only the prefix under a static-prefix glob', () => {
    for (const row of rows.filter((r) => !['info', 'n/a'].includes(r.verdict))) {
      assert.ok(row.verdict === 'PASS' || row.verdict === 'MISS', `${row.id} is ${row.verdict}`);
    }
    assert.equal(rows.find((row) => row.id === '2b')?.verdict, 'PASS');
  });

  it('prints the network rows as ratios to their baselines (network: none; a direct loopback server)', () => {
    for (const id of ['11a', '11b']) {
      const row = rows.find((r) => r.id === id);
      assert.ok(
        row?.ratio !== null && row?.ratio !== undefined && Number.isFinite(row.ratio) && row.ratio > 0,
        id,
      );
      assert.match(row.baseline, /network: none|direct to a loopback server/);
    }
  });

  it('prints the report rows as ratios to a smaller stored run of the same suite', () => {
    for (const id of ['12a', '12b', '12c']) {
      const row = rows.find((r) => r.id === id);
      assert.ok(
        row?.ratio !== null && row?.ratio !== undefined && Number.isFinite(row.ratio) && row.ratio > 0,
        id,
      );
      assert.match(row.baseline, /^16 attempts /);
    }
  });

  it('prints the export/import rows as ratios to a smaller archive of the same suite', () => {
    for (const id of ['14a', '14b', '14c', '14d']) {
      const row = rows.find((r) => r.id === id);
      assert.ok(
        row?.ratio !== null && row?.ratio !== undefined && Number.isFinite(row.ratio) && row.ratio > 0,
        id,
      );
      assert.match(row.baseline, /^8 attempts /);
    }
  });

  it('prints the hundred-thousand-attempt rows against a tenth of the run measured in the same suite', () => {
    for (const row of rows.filter((r) => /^15[d-q]$/.test(r.id) && r.verdict !== 'n/a')) {
      assert.ok(row.ratio !== null && Number.isFinite(row.ratio) && row.ratio > 0, row.id);
      assert.match(row.baseline, /^8 attempts /, row.id);
    }
    const bytes = rows.find((r) => r.id === '15b');
    assert.match(bytes?.witness ?? '', /^\d+\.\d\d KiB$/);
    assert.equal(rows.find((r) => r.id === '15k')?.verdict === 'n/a', !POSTGRES_GIVEN);
  });

  it('caches the trees it generated under the base directory, each beside its manifest', () => {
    const names = fs.readdirSync(base).sort();
    assert.deepEqual(names, [
      'big-1-2-v1',
      'big-1-2-v1.json',
      'changes-100f-5d-v1',
      'changes-100f-5d-v1.json',
      'entries-5x50-v1',
      'entries-5x50-v1.json',
      'main-200f-20d-v2',
      'main-200f-20d-v2.json',
    ]);
  });

  it('prints one table line per row, then the notes', () => {
    const lines = formatTable(rows).split('\n');
    assert.equal(lines.filter((line) => line.startsWith('| ')).length, rows.length + 1);
    assert.ok(lines.some((line) => line.startsWith('- 1a: ')));
  });
});

describe('bench statistics', () => {
  it('takes the nearest-rank percentile and the median', () => {
    const values = Array.from({ length: 100 }, (_, i) => 100 - i);
    assert.deepEqual([percentile(values, 50), percentile(values, 99), median([3, 1, 2])], [50, 99, 2]);
  });
});
