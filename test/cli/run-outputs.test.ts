import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { runCli } from '../support/cli.js';
import { makeWorkspace } from '../support/workspace.js';

/**
 * A run ends with every output it can give (SPEC §13): an output file that cannot be written is named after
 * the table is printed and the other files are written, and the exit status still reports the gate.
 */

const CAMPAIGN = path.resolve('examples/mock-agent.yaml');

describe('witness run outputs', () => {
  it('a report that cannot be written: the table is printed, JUnit written, the report named; exit 1 without a stack', async () => {
    const dir = makeWorkspace();
    const junit = path.join(dir, 'junit.xml');
    const report = path.join(dir, 'no-such-directory', 'report.html');
    const result = await runCli([
      'run',
      CAMPAIGN,
      '--db',
      path.join(dir, 'w.db'),
      '--report',
      report,
      '--junit',
      junit,
    ]);
    assert.equal(result.status, 1, result.stderr);
    assert.match(result.stdout, /^hook-injection\s+1\s.*SUCCESS$/m);
    assert.match(result.stdout, /attack success rate/);
    assert.ok(existsSync(junit));
    assert.match(readFileSync(junit, 'utf8'), /<testsuite /);
    assert.match(
      result.stderr,
      /witness: the report could not be written to .*no-such-directory\/report\.html: ENOENT: no such file or directory/,
    );
    assert.match(
      result.stderr,
      /^witness: the run finished, but the report \(.*report\.html\) could not be written$/m,
    );
    assert.doesNotMatch(result.stderr, /unexpected failure|\n\s+at /);
  });

  it('--fail-on still decides the status when an output file cannot be written', async () => {
    const dir = makeWorkspace();
    const result = await runCli([
      'run',
      CAMPAIGN,
      '--db',
      path.join(dir, 'w.db'),
      '--junit',
      path.join(dir, 'missing', 'junit.xml'),
      '--fail-on',
      'success,undetermined,control',
    ]);
    assert.equal(result.status, 3, result.stderr);
    assert.match(result.stderr, /the JUnit XML could not be written/);
    assert.match(result.stderr, /--fail-on success,undetermined,control: \d+ attempts? ended so/);
  });
});
