#!/usr/bin/env node
// Runs one lane of the suite with node's test runner: `fast` (`npm test`: every test/**/*.test.ts that is
// not heavy) or `heavy` (`npm run test:heavy`: test/**/*.heavy.test.ts). Arguments after the lane go to
// `node --test` (`npm test -- --test-name-pattern=verdict`).
//
// The list of files comes from the TypeScript sources, not from dist/: tsc never deletes what it once
// emitted, so a test that was deleted or renamed (moved into the heavy lane) still has its old .js in
// dist/test, and listing dist/ would keep running it. A source whose built file is missing is an error
// (the build did not run or failed), never a silently smaller suite.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { constants } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// Files run at once. Fast tests often wait on child processes (sandboxed agents, the CLI) rather than use
// a core, so more files than the two cores of a CI machine keep both busy (measured: docs/testing.md).
// The heavy lane's races and resource bounds keep the two they were written for.
const CONCURRENCY = { fast: 3, heavy: 2 };

const [lane, ...extra] = process.argv.slice(2);
if (!Object.hasOwn(CONCURRENCY, lane ?? '')) {
  process.stderr.write(`usage: node test-support/run-tests.mjs <fast|heavy> [node --test options]\n`);
  process.exit(2);
}

/** test/**\/*.test.ts of the lane, as paths relative to the repository root, sorted. */
function sources(dir) {
  const found = [];
  for (const entry of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const relative = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...sources(relative));
    else if (entry.isFile() && entry.name.endsWith('.test.ts')) {
      if (entry.name.endsWith('.heavy.test.ts') === (lane === 'heavy')) found.push(relative);
    }
  }
  return found.sort();
}

const files = sources('test').map((source) => path.join('dist', source.replace(/\.ts$/, '.js')));
const missing = files.filter((file) => !existsSync(path.join(ROOT, file)));
if (files.length === 0 || missing.length > 0) {
  process.stderr.write(
    files.length === 0
      ? `no ${lane} test sources under test/\n`
      : `built tests missing (run \`npx tsc -b tsconfig.json\` and fix its errors): ${missing.join(', ')}\n`,
  );
  process.exit(1);
}

const child = spawn(
  process.execPath,
  [
    '--test',
    `--test-concurrency=${CONCURRENCY[lane]}`,
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    '--test-reporter=./test-support/summary-reporter.mjs',
    '--test-reporter-destination=stdout',
    ...extra,
    ...files,
  ],
  { cwd: ROOT, stdio: 'inherit' },
);
// Ctrl-C reaches the runner itself (same process group): wait for it to report and exit. A SIGTERM sent
// to this process alone is passed on.
process.on('SIGINT', () => undefined);
process.on('SIGTERM', () => child.kill('SIGTERM'));
child.on('exit', (code, signal) => {
  process.exitCode = code ?? 128 + (constants.signals[signal] ?? 0);
});
