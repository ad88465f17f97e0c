import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { platform, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CLI_PATH } from '../support/cli.js';

/**
 * Descriptors Witness inherited reach no agent (SPEC §13). The attack: whatever started Witness (a CI
 * runner, a wrapper script, a shell with `exec 40<secret`) left a descriptor open without close-on-exec;
 * every agent Witness spawned inherited it (spawn passes on every descriptor without the flag, and
 * bubblewrap keeps what it inherits), and read through it a file it was never shown — or wrote to a pipe of
 * its caller's. `witness` marks every descriptor above 2 close-on-exec as it starts.
 *
 * Run with `sandbox: none` (any Linux machine: no bubblewrap needed); the descriptor travels the same way
 * into a sandbox (bubblewrap keeps what it inherits).
 */

const skip = platform() === 'linux' ? false : 'descriptors are listed through /proc (Linux)';

/** The secret's descriptor number in Witness's process: far above any Node opens for itself. */
const INHERITED_FD = 40;

describe('descriptors Witness inherited', { skip }, () => {
  let dir: string;
  let campaign: string;
  let secretFd: number;
  before(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'witness-inherited-fd-')));
    writeFileSync(join(dir, 'secret.txt'), 'INHERITED-SECRET');
    secretFd = openSync(join(dir, 'secret.txt'), 'r');
    campaign = join(dir, 'campaign.yaml');
    // The agent reads the descriptor where the secret was inherited.
    writeFileSync(
      campaign,
      `name: inherited-descriptors
sandbox: none
target:
  kind: command
  command: sh
  args: ["-c", "cat /proc/self/fd/${INHERITED_FD} 2>/dev/null || echo no-descriptor"]
  timeoutMs: 30000
attacks:
  - id: probe
    prompt: probe
    expect: { uri: /nothing.txt, contains: x }
`,
    );
  });
  after(() => {
    closeSync(secretFd);
    rmSync(dir, { recursive: true, force: true });
  });

  /** Runs `node <args>` with the secret as its descriptor 40, inherited without close-on-exec; stdout. */
  function runWithInherited(args: readonly string[]): Promise<string> {
    return new Promise((done, fail) => {
      const stdio: Array<'ignore' | 'pipe' | number> = [
        'ignore',
        'pipe',
        'ignore',
        ...Array<'ignore'>(INHERITED_FD - 3).fill('ignore'),
        secretFd,
      ];
      const child = spawn(process.execPath, [...args], { stdio });
      let out = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        out += chunk.toString('utf8');
      });
      child.once('error', fail);
      child.once('close', () => done(out));
    });
  }

  it('reach no agent of `witness run`: it marks them close-on-exec at start-up', async () => {
    const result = JSON.parse(
      await runWithInherited([CLI_PATH, 'run', campaign, '--json', '--db', ':memory:']),
    );
    assert.equal(result.attempts[0].reply, 'no-descriptor\n');
  });

  it('control: the same campaign run through the library, which marks nothing, leaks the descriptor', async () => {
    const script = join(dir, 'library-run.mjs');
    const module = (path: string) => JSON.stringify(new URL(path, import.meta.url).href);
    writeFileSync(
      script,
      `import { openCampaignSession } from ${module('../../src/attacks/campaign-session.js')};
import { runCampaign } from ${module('../../src/attacks/run-campaign.js')};
const session = await openCampaignSession(process.argv[2], { hostEnv: process.env });
const result = await runCampaign({ campaign: session.campaign, target: session.target, redactor: session.redactor });
process.stdout.write(JSON.stringify(result));
`,
    );
    const result = JSON.parse(await runWithInherited([script, campaign]));
    assert.equal(result.attempts[0].reply, 'INHERITED-SECRET');
  });
});
