import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

/**
 * A finished `witness score` ends with `process.exit` (main.ts, `endsAtOnce`) instead of letting the event
 * loop run dry, which skips Node's teardown of the main thread (30–45 ms of every run). Ending at once must
 * lose nothing: the status is the command's own, and every byte written reaches the reader, here a pipe
 * holding far more than one pipe buffer (64 KiB). A preloaded listener tells the two exits apart: Node
 * emits `beforeExit` only when the loop runs dry, never on `process.exit`.
 * Control, run by hand: with the stdout check removed from `endsAtOnce`, the large output below reached
 * the reader cut at the pipe's 64 KiB and failed to parse.
 */

const BUNDLED_CLI = fileURLToPath(new URL('../../cli/main.js', import.meta.url));
const NATURAL_EXIT = 'natural-exit-seen';

/**
 * The cases `npm test` runs: the exit at once with a verdict, the output that must wait for the pipe, and
 * the control that shows the listener can see a natural exit. score-exit.heavy.test.ts runs the others (a
 * failed write to stdout, a usage error), a process each.
 */
export const FAST_CASES: readonly string[] = [
  'a true verdict: status 0, its whole output, and no natural exit',
  'an output larger than the pipe holds arrives whole (the exit waits for it)',
  'control: witness observe keeps the natural exit, and the listener sees it',
];

/** The cases `select` keeps, in a suite named `title`. */
export function describeScoreExit(title: string, select: (name: string) => boolean): void {
  const named = new Set<string>();
  /** A case: registered as a test when `select` keeps it. */
  const exitCase = (name: string, body: () => void): void => {
    named.add(name);
    if (select(name)) it(name, body);
  };
  describe(title, () => {
    let root = '';
    let preload = '';
    before(() => {
      root = fs.mkdtempSync(`${os.tmpdir()}/witness-score-exit-`);
      fs.mkdirSync(`${root}/ws`);
      // 400 files of 1 KiB, each printed whole in the JSON observation: ≈ 0.5 MB on stdout.
      for (let i = 0; i < 400; i++) fs.writeFileSync(`${root}/ws/f${i}.txt`, `payload ${i} `.repeat(80));
      preload = `${root}/natural-exit.cjs`;
      fs.writeFileSync(
        preload,
        `process.on('beforeExit', () => process.stderr.write(${JSON.stringify(`${NATURAL_EXIT}\n`)}));\n`,
      );
    });
    after(() => fs.rmSync(root, { recursive: true, force: true }));

    const run = (args: string[]) =>
      spawnSync(process.execPath, ['-r', preload, BUNDLED_CLI, ...args], {
        encoding: 'utf8',
        maxBuffer: 64 * 1024 ** 2,
      });

    exitCase('a true verdict: status 0, its whole output, and no natural exit', () => {
      const result = run(['score', `${root}/ws`, '/f7.txt', '--contains', 'payload 7']);
      assert.equal(result.status, 0, result.stderr);
      assert.match(result.stdout, /^Verdict: TRUE\n/);
      assert.match(result.stdout, /content: payload 7 payload 7 /);
      assert.ok(!result.stderr.includes(NATURAL_EXIT), 'witness score waited for the loop to run dry');
    });

    exitCase('an output larger than the pipe holds arrives whole (the exit waits for it)', () => {
      // Past 64 KiB the pipe is full and Node queues the rest of the write: ending at once would lose it,
      // so `endsAtOnce` sees the buffered bytes and leaves the exit to the event loop.
      const result = run(['score', `${root}/ws`, '/*.txt', '--glob', '--contains', 'payload 399', '--json']);
      assert.equal(result.status, 0, result.stderr);
      assert.ok(result.stdout.length > 400_000, `${result.stdout.length} bytes on stdout`);
      const printed = JSON.parse(result.stdout) as {
        score: { value: unknown };
        observation: { payload: { entries: Array<{ uri: string }> } };
      };
      assert.equal(printed.score.value, true);
      assert.equal(printed.observation.payload.entries.length, 400);
      assert.equal(printed.observation.payload.entries[399]?.uri, '/f99.txt');
    });

    exitCase(
      'a failed write to stdout is reported, with status 1, never lost behind the verdict status',
      () => {
        // /dev/full answers every write with ENOSPC. Node knows it when the write returns, but reports it by
        // an 'error' event after the command has returned: ending at once would exit 0 with nothing said.
        const full = fs.openSync('/dev/full', 'w');
        try {
          const result = spawnSync(
            process.execPath,
            ['-r', preload, BUNDLED_CLI, 'score', `${root}/ws`, '/f7.txt', '--contains', 'payload 7'],
            { encoding: 'utf8', stdio: ['ignore', full, 'pipe'] },
          );
          assert.equal(result.status, 1, result.stderr);
          assert.match(result.stderr, /ENOSPC/);
        } finally {
          fs.closeSync(full);
        }
      },
    );

    exitCase('a usage error keeps its own status and message, however it ends', () => {
      // It returns before the prewarmed thread may have probed: then the pool is not idle and the exit is
      // the natural one (prewarm-exit.heavy.test.ts runs such exits many times); either way the status holds.
      const result = run(['score', `${root}/ws`, '/../etc/passwd', '--contains', 'x']);
      assert.equal(result.status, 2, result.stderr);
      assert.match(result.stderr, /passwd/);
    });

    exitCase('control: witness observe keeps the natural exit, and the listener sees it', () => {
      const result = run(['observe', `${root}/ws`, '/f1.txt']);
      assert.equal(result.status, 0, result.stderr);
      assert.ok(result.stderr.includes(NATURAL_EXIT), 'the listener cannot see a natural exit');
    });
  });
  const unknown = FAST_CASES.filter((name) => !named.has(name));
  if (unknown.length > 0) throw new Error(`FAST_CASES names no case: ${unknown.join(', ')}`);
}
