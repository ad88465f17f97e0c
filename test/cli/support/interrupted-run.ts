import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { spawnCli } from '../../support/cli.js';
import { waitUntil } from '../../support/wait-until.js';
import { makeWorkspace } from '../../support/workspace.js';

/**
 * Starts `witness run` (a built `witness` process) on a campaign whose sandboxed agent sleeps, waits
 * until the agent runs, sends `signal`, and checks the process stops with exit 130, says it was
 * interrupted, and leaves no agent workspace (and no record spool) behind.
 */
export async function assertSignalStopsRun(signal: 'SIGINT' | 'SIGTERM'): Promise<void> {
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
  // --json: the run spools its finished records to a private file, which must go too.
  const running = spawnCli(['run', campaign, '--json'], {
    // Workspaces are created under TMPDIR: here, where the test can look. The run's memory
    // (./witness.db) goes in the same directory, not in the checkout the tests run from.
    env: { ...process.env, TMPDIR: dir },
    cwd: dir,
    onSpawn: (id) => {
      pid = id;
    },
  });
  // Wait (generously) until the agent runs, then interrupt the CLI.
  // The run creates and removes directories under `dir` while this looks (the bait check's planted
  // workspace, an attempt's tmp): a listing or read that loses that race is "not yet", not a failure.
  const startedIn = () => {
    try {
      const marker = readdirSync(dir, { recursive: true, encoding: 'utf8' }).find(
        (name) => path.basename(name) === 'started',
      );
      return marker === undefined ? '' : readFileSync(path.join(dir, marker), 'utf8').trim();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
      throw error;
    }
  };
  await waitUntil('the agent to start', () => startedIn() !== '');
  const workspace = startedIn();
  assert.ok(workspace.startsWith(`${realpathSync(dir)}/`), workspace);
  // The spool is there while the run goes (so its removal below means something).
  assert.ok(
    readdirSync(dir).some(
      (name) => name.startsWith('witness-run-') && existsSync(path.join(dir, name, 'records.jsonl')),
    ),
    'the record spool was created under TMPDIR',
  );
  process.kill(pid, signal);
  const result = await running;
  assert.equal(result.status, 130, result.stderr);
  assert.match(result.stderr, /interrupted/);
  assert.equal(existsSync(workspace), false, 'the workspace was removed');
  // Every run directory goes, the private spool of finished records (attempt-spool.ts) with them.
  assert.deepEqual(
    readdirSync(dir).filter((name) => name.startsWith('witness-run-')),
    [],
    'the run directories and the record spool were removed',
  );
}
