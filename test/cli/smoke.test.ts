import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { spawnCli } from '../support/cli.js';
import { needsBubblewrap } from '../support/requirements.js';
import { makeWorkspace } from '../support/workspace.js';
import { assertSignalStopsRun } from './support/interrupted-run.js';

/** Why the tests that run an out-of-process agent (in its sandbox) skip here, if they do. */
const bubblewrap = await needsBubblewrap();

/**
 * The built `witness` binary as a child process: the exit status the process really ends with, and its
 * response to a signal. Everything else about the CLI is tested in process (test/support/cli.ts); the
 * other spawned cases (exit 0 with a verdict, --version, an unknown command, SIGTERM) are in
 * smoke.heavy.test.ts.
 */

describe('witness as a process', () => {
  it('exits 2 for a usage error, with the message on stderr and nothing on stdout', async () => {
    const result = await spawnCli(['score', makeWorkspace(), '/../etc/passwd']);
    assert.equal(result.status, 2);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /inside the root/);
  });

  it("stops a running campaign on SIGINT: the finished attempts' table, the run id and where it is stored, exit 130, the agent's workspace removed", {
    skip: bubblewrap,
  }, async () => {
    await assertSignalStopsRun('SIGINT', false);
  });
});
