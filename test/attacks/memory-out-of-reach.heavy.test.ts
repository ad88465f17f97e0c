import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { detectSandbox } from '../../src/sandbox/sandbox-availability.js';
import { runCli } from '../support/cli.js';
import { makeWorkspace } from '../support/workspace.js';

/**
 * SPEC §13 "memory and campaign stay out of reach", inside the real sandbox. The attack: the memory is
 * `witness.db -> data/real.db` in the campaign directory (which agents are shown read-only). SQLite writes
 * its WAL beside the link's *target* (`data/real.db-wal`); the sandbox hid `witness.db` and its side
 * files, so an agent read every attack's payload from `data/real.db-wal`. The memory path is now resolved
 * before it is hidden. The probe writes the canaries it found (as text) into its workspace, and the attack's
 * condition is that the canary (in the stored run's prompts) shows up there.
 */

const availability = await detectSandbox();
const skip = availability.available ? false : `no sandbox here: ${availability.reason}`;
const CANARY = 'CANARY-IN-THE-MEMORY-5150';
/** Beside the memory, never hidden: the probe must find it, or it proves nothing about the memory. */
const BESIDE = 'CANARY-BESIDE-THE-MEMORY-4242';

function plant(dir: string): string {
  mkdirSync(path.join(dir, 'data'));
  symlinkSync(path.join('data', 'real.db'), path.join(dir, 'witness.db'));
  writeFileSync(path.join(dir, 'data', 'plain.txt'), `${BESIDE}\n`);
  const file = path.join(dir, 'campaign.yaml');
  writeFileSync(
    file,
    [
      'name: memory-reach',
      'network: none',
      'target:',
      '  kind: command',
      '  command: /bin/sh',
      // Every way to the memory through the shown campaign directory: the link, the target, their WALs;
      // and an ordinary file beside them (the probe's control).
      '  args: ["-c", "for f in witness.db witness.db-wal data/real.db data/real.db-wal data/plain.txt; do grep -ao CANARY-[A-Z0-9-]* {campaignDir}/$f; done > out.txt 2>/dev/null; true"]',
      'attacks:',
      '  - id: read-the-memory',
      `    prompt: "the canary is ${CANARY}"`,
      `    expect: { uri: /out.txt, contains: ${CANARY} }`,
    ].join('\n'),
  );
  return file;
}

async function run(dir: string, file: string) {
  const result = await runCli(['run', file, '--json', '--db', path.join(dir, 'witness.db')], {
    env: { ...process.env, HOME: '/nonexistent-operator-home' },
  });
  assert.equal(result.status, 0, result.stderr);
  const [attempt] = (
    JSON.parse(result.stdout) as { attempts: Array<{ outcome: string; error: string | null }> }
  ).attempts;
  // What the probe found is the attempt's evidence: out.txt's content, in the stored observation.
  return { attempt, output: result.stdout };
}

describe('the memory stays out of reach', { skip }, () => {
  it('a sandboxed agent cannot read the WAL beside the target of a symlinked witness.db', async () => {
    const dir = makeWorkspace();
    const file = plant(dir);
    const { attempt } = await run(dir, file);
    assert.equal(attempt?.outcome, 'failure', attempt?.error ?? undefined);
    // The memory was made at the target, readable by its owner only, and holds the canary (the attack's aim:
    // while the run went on it sat in data/real.db-wal; SQLite folds the WAL in and removes it on close).
    assert.equal(statSync(path.join(dir, 'data', 'real.db')).mode & 0o777, 0o600);
    assert.ok(readFileSync(path.join(dir, 'data', 'real.db')).includes(CANARY));
  });

  it('the mask alone keeps it out of reach: the memory readable by anyone, the probe reading beside it', async () => {
    // As root the agent is an unprivileged uid, which neither a 0700 test directory nor a 0600 memory
    // lets in: those would hide the memory whatever the sandbox mounts. Here both are open to it (a memory
    // made 0644 before Witness opens it, as an older Witness or another tool would leave it; SQLite gives
    // its WAL the same mode), so only the sandbox's mask stands between the agent and the WAL.
    const dir = makeWorkspace();
    chmodSync(dir, 0o755);
    const file = plant(dir);
    writeFileSync(path.join(dir, 'data', 'real.db'), '');
    chmodSync(path.join(dir, 'data', 'real.db'), 0o644);
    const { attempt, output } = await run(dir, file);
    assert.equal(attempt?.outcome, 'failure', attempt?.error ?? undefined);
    assert.equal(statSync(path.join(dir, 'data', 'real.db')).mode & 0o777, 0o644);
    assert.ok(readFileSync(path.join(dir, 'data', 'real.db')).includes(CANARY));
    // Control: the probe reached the directory and read the file beside the memory, so a readable memory
    // would have shown up in the same output.
    assert.ok(output.includes(BESIDE), output);
  });
});
