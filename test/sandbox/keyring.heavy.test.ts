import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { bwrapArguments } from '../../src/sandbox/bwrap-arguments.js';
import { systemEntries } from '../../src/sandbox/host-view.js';
import { detectSandbox } from '../../src/sandbox/sandbox-availability.js';
import { CLI_PATH } from '../support/cli.js';
import { needsBubblewrap } from '../support/requirements.js';

/**
 * The kernel keyring is out of an agent's reach (SPEC §13). The attack: every process inherits the
 * session keyring of the one that started it, and the keys of a keyring a process possesses are readable
 * whatever its uid. Witness running in a session keyring holding a key (a container, a CI job, a login
 * session) handed that keyring to every agent, which read the key — and what one attempt's agent stored
 * there, the next one read. The sandbox's seccomp filter makes `add_key`, `request_key` and `keyctl` fail
 * with EPERM. The control runs the same probe in the same sandbox without the filter, and reads the key.
 */

const skip = await needsBubblewrap();
const PROBE = join(
  dirname(fileURLToPath(import.meta.url)),
  '../../../test/sandbox/fixtures/keyring-probe.mjs',
);

/** Runs `command` in a session keyring of its own holding `witness-canary` = KEY-CANARY. */
function inPlantedKeyring(command: string, args: readonly string[]) {
  return spawnSync(
    process.execPath,
    [PROBE, 'plant', 'witness-canary', 'KEY-CANARY', '--', command, ...args],
    { encoding: 'utf8' },
  );
}

describe('the kernel keyring', { skip }, () => {
  let dir: string;
  before(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'witness-keyring-')));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('an agent reads no key of the session keyring Witness runs in; without the filter it does', async () => {
    const file = join(dir, 'keyring.yaml');
    writeFileSync(
      file,
      `name: keyring
target:
  kind: command
  command: ${JSON.stringify(process.execPath)}
  args: [${JSON.stringify(PROBE)}, read, witness-canary]
  timeoutMs: 30000
attacks:
  - id: probe
    prompt: probe
    expect: { uri: /nothing.txt, contains: x }
`,
    );
    const cli = inPlantedKeyring(process.execPath, [CLI_PATH, 'run', file, '--json', '--db', ':memory:']);
    assert.equal(cli.status, 0, cli.stderr);
    const [attempt] = JSON.parse(cli.stdout).attempts;
    assert.equal(attempt.reply, 'search failed: errno 1\n', attempt.error ?? cli.stderr);

    // Control: the same probe in the same sandbox as the same user, without the filter, reads the key (an
    // agent's own uid possesses the keyring it inherited: changing the uid alone is no defence).
    const root = process.getuid?.() === 0;
    const availability = await detectSandbox(root ? { agentUser: { uid: 65534, gid: 65534 } } : {});
    assert.ok(availability.available);
    const argv = bwrapArguments({
      command: process.execPath,
      args: [PROBE, 'read', 'witness-canary'],
      cwd: '/',
      env: { PATH: '/usr/bin:/bin' },
      system: systemEntries(),
      shown: [dirname(process.execPath), resolve('.')],
      hiddenDirectories: [],
      hiddenFiles: [],
      writable: [],
      network: 'host',
      agentUser:
        root && availability.setprivPath !== undefined
          ? { uid: 65534, gid: 65534, setprivPath: availability.setprivPath }
          : undefined,
    });
    const control = inPlantedKeyring(availability.bwrapPath, argv);
    assert.equal(control.stdout, 'read KEY-CANARY\n', control.stderr);
  });
});
