import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { openMemory } from '../../../src/memory/open-memory.js';
import { spawnCli } from '../../support/cli.js';
import { waitUntil } from '../../support/wait-until.js';
import { makeWorkspace } from '../../support/workspace.js';

/**
 * Starts `witness run` (a built `witness` process) on a campaign whose first attack's sandboxed agent
 * ends at once and whose second sleeps, waits until the second runs, sends `signal`, and checks the
 * process stops with exit 130 after printing what finished (the table, or the JSON with `json`), its
 * totals, the run id and where it is stored, and leaves no agent workspace (and no record spool) behind.
 */
export async function assertSignalStopsRun(signal: 'SIGINT' | 'SIGTERM', json: boolean): Promise<void> {
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
      '  args: ["-c", "{prompt}"]',
      'attacks:',
      '  - id: quick',
      '    prompt: "true"',
      '    expect: { uri: /x }',
      '  - id: wait',
      '    prompt: pwd > started; sleep 60',
      '    expect: { uri: /x }',
    ].join('\n'),
  );
  let pid = 0;
  // --json and --junit: the run spools its finished records to a private file, which must go too.
  const db = path.join(dir, 'witness.db');
  const output = json ? ['--json'] : ['--junit', path.join(dir, 'junit.xml')];
  const running = spawnCli(['run', campaign, '--db', db, ...output], {
    // Workspaces are created under TMPDIR: here, where the test can look. The run's memory is in the
    // same directory, not in the checkout the tests run from.
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
  // What finished is shown, with the run id and where it is stored.
  const said =
    /^witness: interrupted: 1 of 2 attempts finished; run (\S+) is stored in (\S+) \(witness report --run \1 --db \2\)$/m.exec(
      result.stderr,
    );
  assert.ok(said !== null, result.stderr);
  assert.equal(said[2], db);
  if (json) {
    const printed = JSON.parse(result.stdout) as {
      run: { runId: string };
      attempts: Array<{ attack: string }>;
    };
    assert.equal(printed.run.runId, said[1]);
    assert.deepEqual(
      printed.attempts.map((attempt) => attempt.attack),
      ['quick'],
    );
  } else {
    assert.match(result.stdout, /^quick\s+1\s.*not written \/x\s.*FAILURE$/m);
    assert.doesNotMatch(result.stdout, /^wait\s/m);
    assert.match(result.stdout, /^slow: 1 attempt — 0 success, 1 failure/m);
  }
  const memory = await openMemory(db, { mustExist: true });
  try {
    const attempts = await memory.listAttempts(said[1] as string);
    assert.deepEqual(
      attempts.map((attempt) => [attempt.attack, attempt.outcome]),
      [['quick', 'failure']],
    );
  } finally {
    await memory.close();
  }
  assert.equal(existsSync(workspace), false, 'the workspace was removed');
  // Every run directory goes, the private spool of finished records (attempt-spool.ts) with them.
  assert.deepEqual(
    readdirSync(dir).filter((name) => name.startsWith('witness-run-')),
    [],
    'the run directories and the record spool were removed',
  );
}
