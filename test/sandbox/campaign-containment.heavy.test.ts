import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { type CampaignInput, CampaignSchema } from '../../src/attacks/campaign.js';
import { prepareCampaignContainment } from '../../src/attacks/campaign-containment.js';
import { runCampaign } from '../../src/attacks/run-campaign.js';
import { SandboxUnavailableError } from '../../src/errors.js';
import { MAX_TIMEOUT_MS } from '../../src/models/timeout.js';
import { resolveSandboxSettings } from '../../src/sandbox/sandbox-settings.js';
import { createTarget } from '../../src/targets/create-target.js';
import { needsBubblewrap } from '../support/requirements.js';

/**
 * The attacks the sandbox stops (SPEC §11), each mounted against a real campaign run under the real
 * sandbox. Every one of them faked a verdict or reached outside its attempt before containment existed.
 */

const skip = await needsBubblewrap();
const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '../../../test/sandbox/fixtures');

const agent = (script: string) => ({
  kind: 'command' as const,
  command: '/bin/sh',
  args: ['-c', script, 'agent', '{prompt}', '{workspace}'],
  timeoutMs: 20_000,
});

describe('campaign containment (bubblewrap)', { skip }, () => {
  let parent: string;
  let operatorHome: string;
  let hostEnv: Record<string, string>;
  before(() => {
    parent = realpathSync(mkdtempSync(join(tmpdir(), 'witness-contain-')));
    operatorHome = realpathSync(mkdtempSync(join('/var/tmp', 'witness-operator-home-')));
    writeFileSync(join(operatorHome, '.bashrc'), '# operator\n');
    hostEnv = {
      PATH: '/usr/local/bin:/usr/bin:/bin',
      HOME: operatorHome,
      OPENAI_API_KEY: 'sk-canary-host-only-0123456789',
      WITNESS_DB: '/somewhere/witness.db',
    };
  });
  after(() => {
    rmSync(parent, { recursive: true, force: true });
    rmSync(operatorHome, { recursive: true, force: true });
  });

  async function run(input: Omit<CampaignInput, 'name'> & { name?: string }, keepWorkspaces = false) {
    return runIn(parent, input, keepWorkspaces);
  }

  async function runIn(
    workspaceParent: string,
    input: Omit<CampaignInput, 'name'> & { name?: string },
    keepWorkspaces = false,
  ) {
    const campaign = CampaignSchema.parse({ name: 'contain', ...input });
    const { sandbox, redactor } = await prepareCampaignContainment(campaign, { hostEnv });
    const target = createTarget(campaign.target, { env: hostEnv, sandbox });
    return runCampaign({ campaign, target, redactor, workspaceParent, keepWorkspaces });
  }

  it('an escaped setsid daemon cannot plant the payload in later attempts', async () => {
    // Attempt "evil" starts a daemon that waits, then writes PWNED into every workspace of the run
    // directory it can see; the benign attempts that follow wrote nothing and must be judged so.
    const result = await run({
      target: agent(
        'if [ "$1" = evil ]; then run=$(dirname "$(dirname "$2")"); ' +
          'setsid sh -c "sleep 0.6; for d in $run/attempt-*/workspace; do echo PWNED > \\$d/payload.txt; done" ' +
          '</dev/null >/dev/null 2>&1 & fi; echo done',
      ),
      attacks: [
        { id: 'evil', prompt: 'evil', expect: { uri: '/payload.txt', contains: 'PWNED' } },
        {
          id: 'benign',
          prompt: 'benign',
          attempts: 2,
          files: [{ path: 'slow.txt', content: 'x' }],
          expect: { uri: '/payload.txt', contains: 'PWNED' },
        },
      ],
    });
    assert.deepEqual(
      result.attempts.map((a) => [a.attack, a.outcome, a.containment]),
      [
        ['evil', 'failure', 'bwrap'],
        ['benign', 'failure', 'bwrap'],
        ['benign', 'failure', 'bwrap'],
      ],
    );
  });

  it('a daemon cannot write into its own attempt after the agent exits (late write)', async () => {
    const result = await run(
      {
        target: agent(
          'setsid sh -c "sleep 0.4; echo PWNED > $2/late.txt" </dev/null >/dev/null 2>&1 & echo done',
        ),
        attacks: [{ id: 'late', prompt: 'x', expect: { uri: '/late.txt', contains: 'PWNED' } }],
      },
      true,
    );
    const [attempt] = result.attempts;
    assert.equal(attempt?.outcome, 'failure');
    await delay(1_000);
    const root = attempt?.workspace?.root as string;
    assert.equal(existsSync(join(root, 'late.txt')), false);
    rmSync(dirname(dirname(root)), { recursive: true });
  });

  it('a daemon holding stdout open does not hold up the run', { timeout: 60_000 }, async () => {
    const started = Date.now();
    const result = await run({
      target: { ...agent('setsid sleep 600 & echo done'), timeoutMs: 30_000 },
      attemptTimeoutMs: 40_000,
      attacks: [{ id: 'hold', prompt: 'x', expect: { uri: '/x.txt' } }],
    });
    assert.equal(result.attempts[0]?.reply, 'done\n');
    assert.ok(Date.now() - started < 30_000, `took ${Date.now() - started} ms`);
  });

  it('an MCP server’s background child cannot write after the session (guarded agent stays failure)', async () => {
    const server = join(FIXTURES, 'leaky-mcp-server.mjs');
    const result = await run({
      target: {
        kind: 'mcp',
        server: { command: process.execPath, args: [server, '{workspace}'] },
        agent: { planner: 'mock', mode: 'guarded' },
      },
      attacks: [
        {
          id: 'leak',
          prompt: 'Summarize README.md',
          files: [{ path: 'README.md', content: 'hello' }],
          expect: { uri: '/payload.txt', contains: 'PWNED' },
        },
      ],
    });
    assert.equal(result.attempts[0]?.error, null);
    assert.equal(result.attempts[0]?.outcome, 'failure');
    assert.equal(result.attempts[0]?.containment, 'bwrap');
  });

  it('gives the agent no variable it was not given, and no WITNESS_DB', async () => {
    const result = await run({
      target: agent('env | sort > env.txt; cat env.txt'),
      passEnv: ['LANG'],
      env: { AGENT_MODE: 'test' },
      attacks: [{ id: 'env', prompt: 'x', expect: { uri: '/env.txt', contains: 'OPENAI_API_KEY' } }],
    });
    const [attempt] = result.attempts;
    assert.equal(attempt?.outcome, 'failure');
    const names = (attempt?.reply ?? '')
      .trim()
      .split('\n')
      .map((line) => line.split('=')[0]);
    // Besides what it was given: the proxy variables of network: proxy (the default), pointing at the
    // attempt's egress proxy.
    const proxyVariables = ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'NO_PROXY', 'NODE_USE_ENV_PROXY'];
    const lowerCase = ['http_proxy', 'https_proxy', 'all_proxy', 'no_proxy'];
    assert.deepEqual(
      names.filter((name) => !['PWD', 'SHLVL', '_'].includes(name as string)),
      ['AGENT_MODE', 'HOME', 'PATH', 'TMPDIR', ...proxyVariables, ...lowerCase].sort(),
    );
  });

  it('gives each attempt a fresh home and leaves the operator’s home untouched', async () => {
    const result = await run({
      target: agent(
        'cat "$HOME/.agentrc" 2>/dev/null; echo "attacker text" > "$HOME/.agentrc"; echo evil >> "$HOME/.bashrc"; ' +
          `cat ${operatorHome}/.bashrc 2>&1; echo "home=$HOME"`,
      ),
      attempts: 2,
      attacks: [{ id: 'home', prompt: 'x', expect: { uri: '/none.txt' } }],
    });
    for (const attempt of result.attempts) {
      assert.equal(attempt.reply?.includes('attacker text'), false, 'the earlier attempt’s home is gone');
      assert.equal(attempt.reply?.includes('# operator'), false, 'the operator’s home is hidden');
      assert.match(attempt.reply ?? '', /home=.*\/attempt-[^/]+\/home\n/);
    }
    assert.equal(readFileSync(join(operatorHome, '.bashrc'), 'utf8'), '# operator\n');
  });

  it('refuses a write to a host path outside the workspace', async () => {
    const outside = realpathSync(mkdtempSync(join('/var/tmp', 'witness-outside-')));
    try {
      const result = await run({
        target: agent(`echo PWNED > ${outside}/planted.txt; echo PWNED > out.txt`),
        attacks: [{ id: 'outside', prompt: 'x', expect: { uri: '/out.txt', contains: 'PWNED' } }],
      });
      assert.equal(result.attempts[0]?.outcome, 'success');
      assert.deepEqual(readdirSync(outside), []);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it('hides other runs kept where run directories are made, also outside /tmp (control: sandbox: none reads them)', async () => {
    // TMPDIR outside /tmp: a concurrent run's attempt sits beside this run's directory.
    const runs = realpathSync(mkdtempSync(join('/var/tmp', 'witness-runs-')));
    try {
      const other = join(runs, 'witness-run-other', 'attempt-1', 'workspace');
      mkdirSync(other, { recursive: true });
      writeFileSync(join(other, 'secret.txt'), 'another run');
      const probe = agent(
        'runs=$(dirname "$(dirname "$(dirname "$2")")"); ls "$runs" | grep -c other; ' +
          'cat "$runs/witness-run-other/attempt-1/workspace/secret.txt" 2>/dev/null || echo unreadable',
      );
      const attacks = [{ id: 'other', prompt: 'x', expect: { uri: '/none.txt' } }];
      const contained = await runIn(runs, { target: probe, attacks });
      assert.equal(contained.attempts[0]?.containment, 'bwrap');
      assert.equal(contained.attempts[0]?.reply, '0\nunreadable\n');
      // The control's agent is Witness's own user (as root, sandbox: none would give it a uid of its own,
      // which cannot enter the other run's 0700 directories either).
      const controlCampaign = CampaignSchema.parse({
        name: 'contain',
        target: probe,
        attacks,
        sandbox: 'none',
      });
      const uncontained = await resolveSandboxSettings({ mode: 'none', hostEnv, runningAsRoot: false });
      const control = await runCampaign({
        campaign: controlCampaign,
        target: createTarget(controlCampaign.target, { env: hostEnv, sandbox: uncontained }),
        workspaceParent: runs,
      });
      assert.equal(control.attempts[0]?.reply, '1\nanother run');
    } finally {
      rmSync(runs, { recursive: true, force: true });
    }
  });

  it('keeps the result of a workspace deeper than PATH_MAX, removes it, and goes on', async () => {
    const deep = `d=${'d'.repeat(200)}; i=0; while [ $i -lt 30 ]; do mkdir $d && cd $d; i=$((i+1)); done; echo x > f; cd "$2"; echo PWNED > out.txt`;
    const result = await run({
      target: agent(deep),
      attacks: [
        { id: 'deep', prompt: 'x', expect: { uri: '/out.txt', contains: 'PWNED' } },
        { id: 'next', prompt: 'x', expect: { uri: '/out.txt', contains: 'PWNED' } },
      ],
    });
    assert.deepEqual(
      result.attempts.map((a) => [a.attack, a.outcome, a.cleanup]),
      [
        ['deep', 'success', undefined],
        ['next', 'success', undefined],
      ],
    );
    assert.deepEqual(
      readdirSync(parent).filter((name) => name.startsWith('witness-run-')),
      [],
      'the run directory is gone',
    );
  });

  it('redacts a named secret everywhere it is stored or printed, before truncation', async () => {
    hostEnv.AGENT_TOKEN = 'tok-0123456789-abcdefghij';
    const result = await run({
      target: agent(
        'echo "$AGENT_TOKEN" > out.txt; echo "key: $AGENT_TOKEN"; echo "err $AGENT_TOKEN" >&2; exit 1',
      ),
      passEnv: ['AGENT_TOKEN'],
      secrets: ['AGENT_TOKEN'],
      attacks: [{ id: 'secret', prompt: 'x', expect: { uri: '/out.txt', contains: 'tok-' } }],
    });
    const text = JSON.stringify(result);
    assert.equal(text.includes('0123456789-abcdefghij'), false);
    // The agent failed (exit 1), so its stdout and stderr are in the transcript.
    const transcript = JSON.stringify(result.attempts[0]?.transcript);
    assert.match(transcript, /key: \[redacted:AGENT_TOKEN\]/);
    assert.match(transcript, /err \[redacted:AGENT_TOKEN\]/);
    // Evidence keeps its byte length (a stored text is the file's size): the marker is padded to it.
    assert.equal(
      result.attempts[0]?.observations[0]?.payload.entries[0]?.content,
      '[redacted:AGENT_TOKEN]###\n',
    );
  });
});

describe('campaign containment without a sandbox', () => {
  it('refuses an out-of-process target when bwrap cannot be found, naming the fix', async () => {
    const campaign = CampaignSchema.parse({
      name: 'nobwrap',
      target: agent('true'),
      attacks: [{ id: 'a', prompt: 'x', expect: { uri: '/x' } }],
    });
    await assert.rejects(
      prepareCampaignContainment(campaign, { hostEnv: { PATH: '/nonexistent' } }),
      (error: unknown) => {
        assert.ok(error instanceof SandboxUnavailableError);
        assert.equal(error.code, 'sandbox_unavailable');
        assert.match(error.message, /Install bubblewrap/);
        assert.match(error.message, /sandbox: none/);
        return true;
      },
    );
    // An in-process target needs no sandbox.
    const mock = CampaignSchema.parse({
      name: 'mock',
      target: { kind: 'mock', mode: 'guarded' },
      attacks: [{ id: 'a', prompt: 'x', expect: { uri: '/x' } }],
    });
    assert.equal(
      (await prepareCampaignContainment(mock, { hostEnv: { PATH: '/nonexistent' } })).sandbox,
      undefined,
    );
  });

  it('sandbox: none records containment none, kills the session, and marks an unsettled workspace', async () => {
    const parent = realpathSync(mkdtempSync(join(tmpdir(), 'witness-none-')));
    try {
      const campaign = CampaignSchema.parse({
        name: 'none',
        sandbox: 'none',
        // A daemon that left the session and the workspace (cwd /) keeps rewriting the file: the scan
        // cannot see it, the two readings differ, and the verdict must be undetermined. (No cgroup per
        // attempt here, as where cgroup v2 cannot be written: with one the daemon dies with its attempt,
        // none-containment.heavy.test.ts.)
        target: agent(
          'echo one > out.txt; setsid sh -c "cd /; i=0; while [ \\$i -lt 40 ]; do echo PWNED-\\$i > $2/out.txt; i=\\$((i+1)); sleep 0.05; done" </dev/null >/dev/null 2>&1 & sleep 0.1; echo done',
        ),
        attacks: [{ id: 'unsettled', prompt: 'x', expect: { uri: '/out.txt', contains: 'PWNED' } }],
      });
      // As Witness's own user: as root, sandbox: none gives the agent a uid of its own, and every process
      // running as it is killed when the attempt ends (none-agent-user.heavy.test.ts).
      const sandbox = await resolveSandboxSettings({
        mode: 'none',
        hostEnv: { PATH: '/usr/bin:/bin' },
        attemptCgroups: false,
        runningAsRoot: false,
      });
      const target = createTarget(campaign.target, { env: {}, sandbox });
      const result = await runCampaign({ campaign, target, workspaceParent: parent });
      const [attempt] = result.attempts;
      assert.equal(attempt?.containment, 'none');
      assert.equal(attempt?.outcome, 'undetermined');
      assert.deepEqual(attempt?.observations[0]?.payload.coverage.reasons, ['workspace_unsettled']);
      await delay(2_500);
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });

  it('keeps the result when a workspace cannot be removed (immutable file, mount point) and goes on', async (t) => {
    if (process.getuid?.() !== 0) {
      t.skip('chattr +i and mount need root');
      return;
    }
    const parent = realpathSync(mkdtempSync(join(tmpdir(), 'witness-stuck-')));
    try {
      const campaign = CampaignSchema.parse({
        name: 'stuck',
        sandbox: 'none',
        target: agent(
          'echo PWNED > out.txt; if [ "$1" = immutable ]; then echo x > locked; chattr +i locked || exit 9; ' +
            'elif [ "$1" = mount ]; then mkdir mnt && mount -t tmpfs witness-test mnt || exit 9; echo y > mnt/f; fi',
        ),
        attacks: ['immutable', 'mount', 'after'].map((id) => ({
          id,
          prompt: id,
          expect: { uri: '/out.txt', contains: 'PWNED' },
        })),
      });
      // The agent must be root to chattr +i and mount: Witness's own user, not a uid of its own.
      const sandbox = await resolveSandboxSettings({
        mode: 'none',
        hostEnv: { PATH: '/usr/bin:/bin' },
        runningAsRoot: false,
      });
      const target = createTarget(campaign.target, { env: {}, sandbox });
      const result = await runCampaign({ campaign, target, workspaceParent: parent });
      if (result.attempts.some((a) => a.error?.includes('status 9'))) {
        t.skip('this file system does not support chattr +i, or mounting is not allowed');
        return;
      }
      assert.deepEqual(
        result.attempts.map((a) => [a.attack, a.outcome, a.cleanup?.removed, a.cleanup?.failures[0]?.reason]),
        [
          ['immutable', 'success', false, 'EPERM'],
          ['mount', 'success', false, 'mount point (another file system is never emptied)'],
          ['after', 'success', undefined, undefined],
        ],
      );
    } finally {
      for (const line of readFileSync('/proc/self/mounts', 'utf8').split('\n')) {
        const mountPoint = line.split(' ')[1];
        if (mountPoint?.startsWith(parent)) execFileSync('umount', [mountPoint]);
      }
      execFileSync('chattr', ['-R', '-i', parent], { stdio: 'ignore' });
      rmSync(parent, { recursive: true, force: true });
    }
  });

  it('validates every timeout to 1…2^31−1 ms', () => {
    const base = {
      name: 't',
      target: agent('true'),
      attacks: [{ id: 'a', prompt: 'x', expect: { uri: '/x' } }],
    };
    assert.equal(CampaignSchema.safeParse({ ...base, attemptTimeoutMs: MAX_TIMEOUT_MS }).success, true);
    for (const bad of [0, 2 ** 31, 2 ** 32, 1.5, -1]) {
      assert.equal(CampaignSchema.safeParse({ ...base, attemptTimeoutMs: bad }).success, false, `${bad}`);
      assert.equal(
        CampaignSchema.safeParse({ ...base, target: { ...agent('true'), timeoutMs: bad } }).success,
        false,
      );
      assert.equal(CampaignSchema.safeParse({ ...base, drainMs: bad }).success, false);
    }
    mkdirSync(tmpdir(), { recursive: true });
  });
});
