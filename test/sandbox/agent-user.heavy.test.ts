import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { bwrapArguments } from '../../src/sandbox/bwrap-arguments.js';
import { systemEntries } from '../../src/sandbox/host-view.js';
import { detectSandbox } from '../../src/sandbox/sandbox-availability.js';
import { runCli } from '../support/cli.js';
import { needsBubblewrap } from '../support/requirements.js';

/**
 * No root inside (SPEC §13), mounted as attacks through `witness run` while Witness runs as root (CI,
 * containers). Before, the agent ran as uid 0 without capabilities — still the owner of every root-owned
 * file: it read `/etc/shadow` and a 0600 file of root's beside the campaign, connected to a root-only unix
 * socket (even under `network: none`: with a real `docker.sock` that is host root), and gave root's files
 * away with `chown`. Each attack has a *control*: the same probe in the same sandbox as uid 0, succeeding.
 */

const bubblewrap = await needsBubblewrap();
const skip =
  bubblewrap !== false
    ? bubblewrap
    : process.getuid?.() !== 0
      ? 'Witness does not run as root here: its agents run as its own user (the CI heavy lane runs as root)'
      : false;

function campaign(name: string, command: string, args: readonly string[], extra = ''): string {
  return `name: ${name}
${extra}target:
  kind: command
  command: ${JSON.stringify(command)}
  args: ${JSON.stringify(args)}
  timeoutMs: 30000
attacks:
  - id: probe
    prompt: probe
    expect: { uri: /nothing.txt, contains: x }
`;
}

/** Runs a program to its end without blocking this process's event loop (a server here must answer). */
function spawnCollect(command: string, args: readonly string[]): Promise<{ stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(command, [...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.once('error', fail);
    child.once('close', () => done({ stdout, stderr }));
  });
}

/** The attempt of a one-attempt campaign run through the CLI. */
async function runOne(file: string) {
  const cli = await runCli(['run', file, '--json', '--db', ':memory:']);
  assert.equal(cli.status, 0, cli.stderr);
  return JSON.parse(cli.stdout).attempts[0] as { reply: string | null; error: string | null };
}

describe('an agent of Witness run as root', { skip }, () => {
  let dir: string;
  let shownDir: string;
  let server: Server;
  before(async () => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'witness-agent-user-')));
    chmodSync(dir, 0o755);
    // Shown to the agent (it is on its PATH): a root-owned unix socket (only its owner may connect, as
    // docker.sock's owner and group) and a 0600 file of root's.
    shownDir = join(dir, 'shown');
    mkdirSync(shownDir, { mode: 0o755 });
    writeFileSync(join(shownDir, 'root-only.txt'), 'ROOT-SECRET\n', { mode: 0o600 });
    server = createServer((socket) => socket.end('root service\n'));
    await new Promise<void>((done) => server.listen(join(shownDir, 'root.sock'), done));
    chmodSync(join(shownDir, 'root.sock'), 0o755);
  });
  after(async () => {
    await new Promise<void>((done) => server.close(() => done()));
    rmSync(dir, { recursive: true, force: true });
  });

  const probe = () =>
    [
      'id -u',
      'cat /etc/shadow >/dev/null 2>&1 && echo shadow-read || echo shadow-refused',
      `cat ${join(shownDir, 'root-only.txt')} 2>/dev/null || echo file-refused`,
      `node -e "require('net').connect(process.argv[1]).on('data',()=>{console.log('socket-connected');process.exit()}).on('error',e=>console.log('socket-'+e.code))" ${join(shownDir, 'root.sock')}`,
      // A file made as root in its workspace, given away (an agent that is root owns whatever it makes).
      'touch mine && (chown 0:0 mine 2>/dev/null && echo chown-done || echo chown-refused)',
      'mkdir -p m && (mount -t tmpfs none m 2>/dev/null && echo mounted || echo mount-refused)',
    ].join('; ');

  it('runs as uid 65534: /etc/shadow, a 0600 root file, a root-only socket, chown and mount are refused', async () => {
    for (const network of ['host', 'none']) {
      const file = join(dir, `probe-${network}.yaml`);
      writeFileSync(
        file,
        campaign(
          'probe',
          'sh',
          ['-c', probe()],
          `network: ${network}\nenv: { PATH: "${shownDir}:/usr/bin:/bin" }\n`,
        ),
      );
      const attempt = await runOne(file);
      assert.deepEqual(
        attempt.reply?.trim().split('\n'),
        ['65534', 'shadow-refused', 'file-refused', 'socket-EACCES', 'chown-refused', 'mount-refused'],
        attempt.error ?? '',
      );
    }
    // Control: the same sandbox as uid 0 without capabilities (no user of its own) reads, connects and
    // gives its file away (mount stays refused: no capability either way).
    const workspace = mkdtempSync(join(dir, 'control-'));
    const availability = await detectSandbox();
    assert.ok(availability.available);
    const argv = bwrapArguments({
      command: '/bin/sh',
      args: ['-c', `cd ${workspace}; ${probe()}`],
      cwd: '/',
      env: { PATH: `${shownDir}:/usr/bin:/bin` },
      system: systemEntries(),
      shown: [shownDir, workspace],
      hiddenDirectories: [],
      hiddenFiles: [],
      writable: [],
      network: 'none',
    });
    // The control's workspace is writable: bound read-write over its read-only showing.
    const at = argv.indexOf('--remount-ro');
    argv.splice(at, 0, '--bind', workspace, workspace);
    const control = await spawnCollect(availability.bwrapPath, argv);
    assert.deepEqual(
      control.stdout.trim().split('\n'),
      ['0', 'shadow-read', 'ROOT-SECRET', 'socket-connected', 'chown-done', 'mount-refused'],
      control.stderr,
    );
  });

  it('runs as the user runAs: names', async () => {
    const file = join(dir, 'run-as.yaml');
    writeFileSync(
      file,
      `runAs: "1234:2345"\n${campaign('run-as', 'sh', ['-c', 'id -u; id -g; touch made; stat -c "%u:%g" made'])}`,
    );
    const attempt = await runOne(file);
    assert.deepEqual(attempt.reply?.trim().split('\n'), ['1234', '2345', '1234:2345'], attempt.error ?? '');
    writeFileSync(file, `runAs: 0\n${campaign('run-as', 'sh', ['-c', 'id -u'])}`);
    const refused = await runCli(['run', file, '--json', '--db', ':memory:']);
    assert.equal(refused.status, 2);
    assert.match(refused.stderr, /uid 0 is root/);
  });

  it('hands the workspace and the home over to the agent’s user, whose files they then are', async () => {
    const file = join(dir, 'owner.yaml');
    writeFileSync(
      file,
      `${campaign('owner', 'sh', ['-c', 'touch made.txt "$HOME/made.txt"; stat -c "%u %a" . "$HOME" made.txt "$HOME/made.txt" planted.txt'])}workspace:\n  files: [{ path: planted.txt, content: x }]\n`,
    );
    const attempt = await runOne(file);
    // The workspace (0755, for bubblewrap to enter), the home, what the agent made, what was planted.
    assert.deepEqual(
      attempt.reply?.trim().split('\n'),
      ['65534 755', '65534 700', '65534 644', '65534 644', '65534 644'],
      attempt.error ?? '',
    );
  });

  it('refuses, before the run, a program its user cannot reach, naming the path and the fix', async () => {
    const hidden = mkdtempSync(join(dir, 'private-')); // 0700, as `mktemp -d` makes it
    const agent = join(hidden, 'agent.sh');
    writeFileSync(agent, '#!/bin/sh\necho ran\n');
    chmodSync(agent, 0o755);
    const file = join(dir, 'unreachable.yaml');
    writeFileSync(file, campaign('unreachable', agent, []));
    const cli = await runCli(['run', file, '--json', '--db', ':memory:']);
    assert.equal(cli.status, 2, cli.stderr);
    assert.equal(cli.stdout, '');
    assert.match(
      cli.stderr,
      new RegExp(`uid 65534 .*cannot search ${hidden} \\(mode 0700.*chmod o\\+x ${hidden}.*runAs:`),
    );
    // Control: the same campaign once the directory may be entered runs, as that user.
    chmodSync(hidden, 0o755);
    const attempt = await runOne(file);
    assert.equal(attempt.reply, 'ran\n');
    assert.equal(statSync(hidden).mode & 0o777, 0o755);
    assert.deepEqual(readdirSync(hidden), ['agent.sh']);
  });
});
