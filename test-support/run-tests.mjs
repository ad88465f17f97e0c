#!/usr/bin/env node
// Runs one lane of the suite with node's test runner: `fast` (`npm test`: every test/**/*.test.ts that is
// not heavy) or `heavy` (`npm run test:heavy`: test/**/*.heavy.test.ts). Arguments after the lane go to
// `node --test` (`npm test -- --test-name-pattern=verdict`); `--list` prints what would run, process by
// process, and runs nothing. docs/testing.md explains the choices below.
//
// - The list of files comes from the TypeScript sources, not from dist/: tsc never deletes what it once
//   emitted, so a deleted or renamed test (one moved into the heavy lane) keeps its old .js in dist/test,
//   and listing dist/ would keep running it. A source whose built file is missing is an error (the build
//   did not run or failed), never a silently smaller suite.
// - The fast lane runs its files in a few processes ("shards"), each importing its share of the files one
//   after another, every file's tests inside a suite named after the file. A process per file spent most
//   of the lane's CPU time starting node and loading the same modules eighty times over. Shards are
//   filled longest first from test-support/fast-lane-weights.json (seconds per file; a file not listed
//   there counts as the median), so they end at about the same time; `--record-weights` rewrites it.
//   A file that checks the whole process (OWN_PROCESS) still runs in a process of its own.
// - The heavy lane keeps a process per file: its races, resource bounds and descriptor counts are
//   measured on a process of their own, two at a time as they were written for.
// - The fast lane's temporary files go to a private directory on a tmpfs (/dev/shm) when there is one and
//   TMPDIR is not set: its thousands of small attempt directories cost the kernel far less there than on
//   a disk file system (tmpfsDirectory below).
// - Every process, a shard or a file of its own, is started from a generated entry module that arms the
//   exit watchdog (exit-watchdog.mjs): a process still alive a minute after its last test fails, naming
//   what holds it, instead of keeping the runner (and CI) waiting for ever.
// - The closing summary (closing-summary.mjs) says how many tests were skipped for each reason, fails the
//   run when the tests wrote into the checkout, and, with WITNESS_TEST_STRICT=1 (.ci/run), when any test
//   was skipped; its last line is the plain "N passed, N failed, N skipped" CI reads.
import { spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statfsSync,
  writeFileSync,
} from 'node:fs';
import { constants, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkoutState, checkoutWrites, closingSummary } from './closing-summary.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const LANES = {
  // Four shards at once on two cores: many fast tests wait on a child process (a sandboxed agent, the CLI)
  // rather than use a core, and a shard that waits lets another run.
  fast: { heavy: false, shards: 4, tmpfs: true },
  heavy: { heavy: true, concurrency: 2, tmpfs: false },
};
// Fast-lane files that check the whole process (its open descriptors, its threads, its one pool of
// acquisition threads): in a shard, another file's acquisition still ending or its late cleanup could
// move those counts, so each of these gets a process of its own.
const OWN_PROCESS = new Set([
  'test/sources/local-file/acquisition-pool.test.ts',
  'test/sources/local-file/cancellation.test.ts',
]);
// Fast-lane files that share a costly fixture of their process, kept in one shard so it is built once:
// the checks of src/ load TypeScript (a 9 MB module, about 0.5 s of CPU to compile) and parse src/ with
// it, which runs several times faster once the parser is warm (test/support/parsed-source.ts).
const SAME_PROCESS = [
  ['test/function-length.test.ts', 'test/import-graph.test.ts', 'test/plain-errors.test.ts'],
];
const WEIGHTS = path.join(ROOT, 'test-support', 'fast-lane-weights.json');
const SHARDS = path.join(ROOT, 'dist', 'test-shards');

const [lane, ...rest] = process.argv.slice(2);
const recordWeights = rest.includes('--record-weights');
const listOnly = rest.includes('--list');
const extra = rest.filter((arg) => arg !== '--record-weights' && arg !== '--list');
const config = Object.hasOwn(LANES, lane ?? '') ? LANES[lane] : undefined;
if (config === undefined) {
  process.stderr.write(
    `usage: node test-support/run-tests.mjs <${Object.keys(LANES).join('|')}> [node --test options]\n`,
  );
  process.exit(2);
}

/** test/**\/*.test.ts of the lane, as paths relative to the repository root, sorted. */
function sources(dir) {
  const found = [];
  for (const entry of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const relative = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...sources(relative));
    else if (entry.isFile() && entry.name.endsWith('.test.ts')) {
      if (entry.name.endsWith('.heavy.test.ts') === config.heavy) found.push(relative);
    }
  }
  return found.sort();
}

const built = (source) => path.join('dist', source.replace(/\.ts$/, '.js'));

const tests = sources('test');
const missing = tests.filter((source) => !existsSync(path.join(ROOT, built(source))));
if (tests.length === 0 || missing.length > 0) {
  process.stderr.write(
    tests.length === 0
      ? `no ${lane} test sources under test/\n`
      : `built tests missing (run \`npx tsc -b tsconfig.json\` and fix its errors): ${missing.map(built).join(', ')}\n`,
  );
  process.exit(1);
}

/** The lane's shard count, or WITNESS_TEST_SHARDS (a machine with more cores may want more). */
function shardCount() {
  const setting = process.env.WITNESS_TEST_SHARDS;
  if (setting === undefined || setting === '') return config.shards;
  const count = Number(setting);
  if (!Number.isInteger(count) || count < 1) {
    process.stderr.write(`WITNESS_TEST_SHARDS must be a positive integer, got ${JSON.stringify(setting)}\n`);
    process.exit(2);
  }
  return count;
}

/**
 * Longest first, each file (or each SAME_PROCESS group of files, weighing what its files weigh) into the
 * shard with the least weight so far.
 */
function shard(files, count) {
  const known = existsSync(WEIGHTS) ? JSON.parse(readFileSync(WEIGHTS, 'utf8')) : {};
  const listed = files.map((file) => known[file]).filter((weight) => typeof weight === 'number');
  listed.sort((a, b) => a - b);
  const median = listed.length > 0 ? listed[Math.floor(listed.length / 2)] : 1;
  const weight = (file) => (typeof known[file] === 'number' ? known[file] : median);
  const grouped = new Set(SAME_PROCESS.flat());
  const units = [
    ...SAME_PROCESS.map((group) => group.filter((file) => files.includes(file))).filter(
      (group) => group.length > 0,
    ),
    ...files.filter((file) => !grouped.has(file)).map((file) => [file]),
  ].map((unit) => ({ files: unit, weight: unit.reduce((sum, file) => sum + weight(file), 0) }));
  const shards = Array.from({ length: Math.min(count, units.length) }, () => ({ weight: 0, files: [] }));
  for (const unit of units.sort((a, b) => b.weight - a.weight || a.files[0].localeCompare(b.files[0]))) {
    const lightest = shards.reduce((best, candidate) => (candidate.weight < best.weight ? candidate : best));
    lightest.weight += unit.weight;
    lightest.files.push(...unit.files);
  }
  return shards.map((entry) => entry.files.sort());
}

/**
 * Writes one process's entry module: each file's tests run in a suite named after the file, and the exit
 * watchdog (exit-watchdog.mjs) fails the process, naming what holds it, when it stays alive after its
 * last test instead of waiting on it for ever.
 */
function writeShard(name, files) {
  const file = path.join(SHARD_DIR, `${name}.mjs`);
  const imports = files.map((source) => [source, `../../${built(source).slice('dist/'.length)}`]);
  writeFileSync(
    file,
    `// Generated by test-support/run-tests.mjs (one process for its test files); do not edit.
import { after, afterEach, before, beforeEach, describe } from 'node:test';
import { armExitWatchdog, noteFileEnd } from '../../../test-support/exit-watchdog.mjs';
import { cpuMark, noteCpu } from '../../../test-support/cpu-log.mjs';

const files = ${JSON.stringify(imports, null, 2)};
for (const [name, module] of files) {
  describe(name, async () => {
    let start;
    let testStart;
    before(() => {
      start = cpuMark();
    });
    beforeEach(() => {
      testStart = cpuMark();
    });
    afterEach((t) => noteCpu(name, t.name, testStart));
    after(() => {
      noteFileEnd(name);
      noteCpu(name, '', start);
    });
    await import(module);
  });
}
after(() => armExitWatchdog(${JSON.stringify(`${name} (${files.length === 1 ? files[0] : `${files.length} files`})`)}, files.at(-1)[0]));
`,
  );
  return path.relative(ROOT, file);
}

/** The entry module's name for a file in a process of its own: test/a/b.heavy.test.ts → a-b.heavy. */
const alone = (source) => source.slice('test/'.length, -'.test.ts'.length).replaceAll('/', '-');

// Each lane its own directory, so a fast lane started while a heavy one runs does not delete its modules.
const SHARD_DIR = path.join(SHARDS, lane);
rmSync(SHARD_DIR, { recursive: true, force: true });
mkdirSync(SHARD_DIR, { recursive: true });
let files;
let concurrency;
if (config.shards === undefined) {
  files = tests.map((source) => writeShard(alone(source), [source]));
  concurrency = config.concurrency;
} else {
  const shared = tests.filter((source) => !OWN_PROCESS.has(source));
  files = [
    ...shard(shared, shardCount()).map((group, index) => writeShard(`shard-${index + 1}`, group)),
    ...tests.filter((source) => OWN_PROCESS.has(source)).map((source) => writeShard(alone(source), [source])),
  ];
  concurrency = files.length;
}

if (listOnly) {
  // What would run, process by process: `node test-support/run-tests.mjs fast --list`.
  for (const file of files) {
    process.stdout.write(`${file}\n`);
    if (file.startsWith('dist/test-shards/')) {
      const modules = JSON.parse(
        readFileSync(path.join(ROOT, file), 'utf8').match(/^const files = ([\s\S]*?\]);$/m)[1],
      );
      for (const [name] of modules) process.stdout.write(`  ${name}\n`);
    }
  }
  process.exit(0);
}

/** statfs(2)'s f_type of a tmpfs. */
const TMPFS_MAGIC = 0x01021994;
/** Room the fast lane's temporary files may need at most (its largest trees are a few MiB; sparse files). */
const TMPFS_ROOM = 512 * 1024 ** 2;

/**
 * A private temporary directory on a tmpfs (/dev/shm) for the fast lane, or undefined to keep the
 * system's. The fast lane makes and removes thousands of small directories (a workspace, a home and a tmp
 * for every attempt of every campaign it runs); on a disk file system each costs journal work in the
 * kernel, which was a third of the lane's CPU time here (ext4 /tmp), and the campaign tests took about
 * 15 % less CPU on a tmpfs. A TMPDIR the caller set is kept, as is the heavy lane's (its 1 GiB
 * acquisitions stay on disk), so both kinds of file system stay tested; WITNESS_TEST_TMPFS=0 turns it off.
 * Mode 1777, like /tmp: whatever a test does there, it does as it would in /tmp.
 */
function tmpfsDirectory() {
  if (!config.tmpfs || process.env.WITNESS_TEST_TMPFS === '0') return undefined;
  if (process.env.TMPDIR !== undefined && process.env.TMPDIR !== '') return undefined;
  try {
    const stats = statfsSync('/dev/shm');
    if (stats.type !== TMPFS_MAGIC || stats.bavail * stats.bsize < TMPFS_ROOM) return undefined;
    const dir = mkdtempSync('/dev/shm/witness-tests-');
    chmodSync(dir, 0o1777);
    return dir;
  } catch {
    return undefined; // no /dev/shm, or not writable: the system's temporary directory
  }
}

const strict = process.env.WITNESS_TEST_STRICT === '1';
const resultsDir = mkdtempSync(path.join(tmpdir(), 'witness-test-results-'));
const resultsFile = path.join(resultsDir, 'results.json');
const before = checkoutState(ROOT);
const tmp = tmpfsDirectory();
const child = spawn(
  process.execPath,
  [
    '--test',
    `--test-concurrency=${concurrency}`,
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    '--test-reporter=./test-support/summary-reporter.mjs',
    '--test-reporter-destination=stdout',
    ...(recordWeights && config.shards !== undefined
      ? ['--test-reporter=./test-support/weights-reporter.mjs', `--test-reporter-destination=${WEIGHTS}`]
      : []),
    ...extra,
    ...files,
  ],
  {
    cwd: ROOT,
    stdio: 'inherit',
    env: { ...process.env, WITNESS_TEST_RESULTS: resultsFile, ...(tmp === undefined ? {} : { TMPDIR: tmp }) },
  },
);
// Ctrl-C reaches the runner itself (same process group): wait for it to report and exit. A SIGTERM sent
// to this process alone is passed on.
process.on('SIGINT', () => undefined);
process.on('SIGTERM', () => child.kill('SIGTERM'));
child.on('exit', (code, signal) => {
  if (tmp !== undefined) rmSync(tmp, { recursive: true, force: true });
  const status = code ?? 128 + (constants.signals[signal] ?? 0);
  let results;
  try {
    results = JSON.parse(readFileSync(resultsFile, 'utf8'));
  } catch {
    // The runner died before its reporters ended: its status says so; there is nothing to sum up.
  } finally {
    rmSync(resultsDir, { recursive: true, force: true });
  }
  if (results === undefined) {
    process.stdout.write(`\nthe test runner ended (${signal ?? `status ${code}`}) before it reported\n`);
    process.exitCode = status === 0 ? 1 : status;
    return;
  }
  const after = checkoutState(ROOT);
  const summary = closingSummary(results, {
    strict,
    writes: checkoutWrites(before, after),
    checkoutUnavailable: before.unavailable ?? after.unavailable,
  });
  process.stdout.write(summary.text);
  process.exitCode = status !== 0 ? status : summary.failed > 0 ? 1 : 0;
});
