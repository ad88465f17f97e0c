import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { spawnCli } from '../support/cli.js';
import { makeWorkspace } from '../support/workspace.js';
import { assertSignalStopsRun } from './support/interrupted-run.js';

/** The rest of the spawned `witness` smoke tests (a usage error and SIGINT run in `npm test`: smoke.test.ts). */

describe('witness as a process (heavy lane)', () => {
  it('exits 0 with a verdict on stdout', async () => {
    const root = makeWorkspace({ 'out.txt': 'pwned' });
    const result = await spawnCli(['score', root, '/out.txt', '--contains', 'pwned', '--json']);
    assert.equal(result.status, 0, result.stderr);
    assert.equal((JSON.parse(result.stdout) as { score: { value: boolean } }).score.value, true);
  });

  it('exits 0 for --version and 2 for an unknown command', async () => {
    assert.equal((await spawnCli(['--version'])).status, 0);
    const unknown = await spawnCli(['no-such-command']);
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr, /unknown command/);
  });

  it("stops a running campaign on SIGTERM: exit 130, the agent's workspace removed", async () => {
    await assertSignalStopsRun('SIGTERM', true);
  });
});
