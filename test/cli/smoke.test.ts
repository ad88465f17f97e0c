import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { spawnCli } from '../support/cli.js';
import { makeWorkspace } from '../support/workspace.js';

/**
 * The built `witness` binary as a child process: the exit status the process really ends with, and its
 * response to signals. Everything else about the CLI is tested in process (test/support/cli.ts).
 */

describe('witness as a process', () => {
  it('exits 0 with a verdict on stdout', async () => {
    const root = makeWorkspace({ 'out.txt': 'pwned' });
    const result = await spawnCli(['score', root, '/out.txt', '--contains', 'pwned', '--json']);
    assert.equal(result.status, 0, result.stderr);
    assert.equal((JSON.parse(result.stdout) as { score: { value: boolean } }).score.value, true);
  });

  it('exits 2 for a usage error, with the message on stderr and nothing on stdout', async () => {
    const result = await spawnCli(['score', makeWorkspace(), '/../etc/passwd']);
    assert.equal(result.status, 2);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /inside the root/);
  });

  it('exits 0 for --version and 2 for an unknown command', async () => {
    assert.equal((await spawnCli(['--version'])).status, 0);
    const unknown = await spawnCli(['no-such-command']);
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr, /unknown command/);
  });

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`stops a running campaign on ${signal}: exit 130, the agent's workspace removed`, async () => {
      const dir = makeWorkspace();
      const campaign = path.join(dir, 'slow.yaml');
      writeFileSync(
        campaign,
        [
          'name: slow',
          'target:',
          '  kind: command',
          '  command: /bin/sh',
          // The agent runs sandboxed: it can write only inside its own workspace (its working directory).
          '  args: ["-c", "pwd > started; sleep 60"]',
          'attacks:',
          '  - id: wait',
          '    prompt: wait',
          '    expect: { uri: /x }',
        ].join('\n'),
      );
      let pid = 0;
      const running = spawnCli(['run', campaign], {
        // Workspaces are created under TMPDIR: here, where the test can look.
        env: { ...process.env, TMPDIR: dir },
        onSpawn: (id) => {
          pid = id;
        },
      });
      // Wait (generously) until the agent runs, then interrupt the CLI.
      const startedIn = () => {
        const marker = readdirSync(dir, { recursive: true, encoding: 'utf8' }).find(
          (name) => path.basename(name) === 'started',
        );
        return marker === undefined ? '' : readFileSync(path.join(dir, marker), 'utf8').trim();
      };
      for (let waited = 0; startedIn() === '' && waited < 60_000; waited += 50) await sleep(50);
      const workspace = startedIn();
      assert.notEqual(workspace, '', 'the agent started');
      assert.ok(workspace.startsWith(`${realpathSync(dir)}/`), workspace);
      process.kill(pid, signal);
      const result = await running;
      assert.equal(result.status, 130, result.stderr);
      assert.match(result.stderr, /interrupted/);
      assert.equal(existsSync(workspace), false, 'the workspace was removed');
    });
  }
});
