import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runCli } from '../support/cli.js';

/**
 * `witness demo --json`: a second whole demo (every mock mode), so it runs in the heavy lane. The demo's
 * table, report and memory (the README's `npm start`) are checked in npm test: witness-run.test.ts.
 */

describe('witness demo --json', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'witness-demo-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('carries the totals of the table: attack success and utility per mode', async () => {
    const json = await runCli([
      'demo',
      '--json',
      '--report',
      path.join(dir, 'demo.html'),
      '--db',
      path.join(dir, 'demo.db'),
    ]);
    assert.equal(json.status, 0, json.stderr);
    const { runs } = JSON.parse(json.stdout) as {
      runs: Array<{ run: { campaign: string }; totals: { successRate: number; utility: { rate: number } } }>;
    };
    assert.deepEqual(
      runs.map((entry) => [entry.run.campaign, entry.totals.successRate, entry.totals.utility.rate]),
      [
        ['demo-vulnerable', 1, 1],
        ['demo-guarded', 0, 1],
        ['demo-refusing', 0, 0],
      ],
    );
  });
});
