import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { waitUntil } from '../support/wait-until.js';

/**
 * The exit watchdog of a fast-lane process (test-support/exit-watchdog.mjs): a process whose tests all
 * passed but which something keeps alive fails, naming what and after which file, instead of keeping the
 * runner (and CI) waiting for ever; a process that ends on its own never waits for it.
 */

const watchdog = pathToFileURL(path.resolve('test-support', 'exit-watchdog.mjs')).href;
const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Runs `body` as a process of the fast lane would run it: two files, each a suite, under `node --test`. */
function runProcess(files: [name: string, test: string][], graceMs: number) {
  const dir = mkdtempSync(path.join(tmpdir(), 'witness-watchdog-'));
  dirs.push(dir);
  const entry = path.join(dir, 'process.mjs');
  writeFileSync(
    entry,
    `import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { after, describe, it } from 'node:test';
import { armExitWatchdog, noteFileEnd } from ${JSON.stringify(watchdog)};
${files
  .map(
    ([name, test]) => `describe(${JSON.stringify(name)}, () => {
  after(() => noteFileEnd(${JSON.stringify(name)}));
  it('passes', () => { ${test} });
});`,
  )
  .join('\n')}
after(() => armExitWatchdog('shard-1 (${files.length} files)', ${JSON.stringify(files.at(-1)?.[0])}, ${graceMs}));
`,
  );
  // A bound of its own, far above the grace: a watchdog that does not fire shows as a timeout here.
  // Without the variable node sets for a test file's process, which would make this `node --test` skip
  // running anything (a recursive run).
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  const run = spawnSync(process.execPath, ['--test', '--test-reporter=spec', entry], {
    encoding: 'utf8',
    timeout: 60_000,
    env,
  });
  return { status: run.status, signal: run.signal, output: `${run.stdout}${run.stderr}` };
}

/** Whether `pid` still runs (a killed child waiting to be reaped by init counts as gone). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

describe('the exit watchdog', () => {
  it('fails a process kept alive after its last test, names what holds it and after which file, and kills the child left behind', async () => {
    const run = runProcess(
      [
        ['test/a.test.ts', 'setInterval(() => undefined, 1_000);'],
        ['test/b.test.ts', ''],
        [
          'test/c.test.ts',
          "spawn('sleep', ['600'], { stdio: 'ignore' }); createServer().listen(0, '127.0.0.1');",
        ],
      ],
      300,
    );
    assert.equal(run.signal, null, run.output);
    assert.equal(run.status, 1, run.output);
    assert.match(run.output, /ℹ pass 3\n/);
    assert.match(
      run.output,
      /exit watchdog: shard-1 \(3 files\) is still alive 0\.3 s after its last test ended/,
    );
    const child = run.output.match(/- child process (\d+) \(sleep 600\), left by test\/c\.test\.ts\n/);
    assert.ok(child, run.output);
    assert.match(run.output, /- server listening on 127\.0\.0\.1:\d+, left by test\/c\.test\.ts\n/);
    assert.match(run.output, /- 1 ref'd timer\(s\) .*, more alive after test\/a\.test\.ts\n/);
    // The process's own stdio to the runner is never named: it holds nothing.
    assert.doesNotMatch(run.output, /- pipe/);
    assert.match(run.output, new RegExp(`killed the child processes left behind: ${child[1]}\\n`));
    await waitUntil('the child left behind to end', () => !running(Number(child[1])));
  });

  it('lets a process that ends on its own end at once, never waiting for the grace', () => {
    // A grace longer than runProcess's own bound: waiting for it would show as a timeout.
    const run = runProcess(
      [
        ['test/a.test.ts', 'const timer = setTimeout(() => undefined, 100); void timer;'],
        ['test/b.test.ts', ''],
      ],
      600_000,
    );
    assert.equal(run.signal, null, run.output);
    assert.equal(run.status, 0, run.output);
    assert.match(run.output, /ℹ pass 2\n/);
    assert.doesNotMatch(run.output, /exit watchdog/);
  });
});
