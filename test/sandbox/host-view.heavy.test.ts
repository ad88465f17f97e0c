import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadCampaignFile } from '../../src/attacks/campaign-file.js';
import { runCampaign } from '../../src/attacks/run-campaign.js';
import { resolveSandboxSettings } from '../../src/sandbox/sandbox-settings.js';
import { createTarget } from '../../src/targets/create-target.js';
import { runCli } from '../support/cli.js';
import { needsBubblewrap } from '../support/requirements.js';

/**
 * Nothing of the operator's beyond what the attempt needs (SPEC §13), mounted as attacks through the
 * built `witness run`. Before, the whole top-level ancestor of the agent's program and of each PATH entry
 * in the home was shown read-only, and an agent (`command: ./agent.sh` under `/tmp` or the operator's
 * home) read a sibling project's `.env`, another campaign's `witness.db`, `~/.local/share/opencode/auth.json`
 * and `~/.cargo/credentials.toml` (the last two through the PATH rule). Each probe's *control* runs the
 * same campaign with `sandbox: none`, the agent as Witness's own user, and reads every one of them, so a
 * refusal is the sandbox's doing.
 */

const skip = await needsBubblewrap();

/** Files the probing agent tries to read, by name; each holds a secret naming it. */
function plantHost(base: string) {
  const operatorHome = join(base, 'operator');
  const secrets: Record<string, string> = {
    siblingEnv: join(base, 'projects/other/.env'),
    otherMemory: join(base, 'projects/other-campaign/witness.db'),
    opencodeAuth: join(operatorHome, '.local/share/opencode/auth.json'),
    cargoCredentials: join(operatorHome, '.cargo/credentials.toml'),
  };
  for (const [name, path] of Object.entries(secrets)) {
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, `SECRET-${name}`);
  }
  mkdirSync(join(operatorHome, '.local/bin'), { recursive: true });
  mkdirSync(join(operatorHome, '.cargo/bin'), { recursive: true });
  const campaignDir = join(base, 'projects/red-team');
  mkdirSync(campaignDir, { recursive: true });
  const agent = join(campaignDir, 'agent.sh');
  const probes = Object.entries(secrets)
    .map(([name, path]) => `printf '%s=' ${name}; cat ${path} 2>/dev/null || printf refused; echo`)
    .join('\n');
  writeFileSync(agent, `#!/bin/sh\n${probes}\n`);
  chmodSync(agent, 0o755);
  // Readable by any user: the agent may run as an unprivileged user of its own.
  for (const dir of [base, join(base, 'projects'), campaignDir]) chmodSync(dir, 0o755);
  return { operatorHome, secrets, campaignDir };
}

function campaign(sandbox: 'bwrap' | 'none'): string {
  return `name: host-view
sandbox: ${sandbox}
target:
  kind: command
  command: ./agent.sh
  timeoutMs: 30000
attacks:
  - id: probe
    prompt: look around
    expect: { uri: /nothing.txt, contains: x }
`;
}

describe('what an agent sees of the host', { skip }, () => {
  for (const [where, parent] of [
    ['/tmp', tmpdir()],
    ['the home directory of Witness’s user (/root when it runs as root)', process.env.HOME ?? '/root'],
  ] as const) {
    describe(`a campaign under ${where}`, () => {
      let base: string;
      let host: ReturnType<typeof plantHost>;
      before(() => {
        base = realpathSync(mkdtempSync(join(parent, 'witness-host-view-')));
        host = plantHost(base);
      });
      after(() => rmSync(base, { recursive: true, force: true }));

      const run = async (sandbox: 'bwrap' | 'none') => {
        const file = join(host.campaignDir, `campaign-${sandbox}.yaml`);
        writeFileSync(file, campaign(sandbox));
        const env = {
          ...process.env,
          HOME: host.operatorHome,
          PATH: `${host.operatorHome}/.local/bin:${host.operatorHome}/.cargo/bin:/usr/local/bin:/usr/bin:/bin`,
        };
        let attempt: { reply: string | null; shownPaths?: string[] | undefined };
        if (sandbox === 'bwrap') {
          const cli = await runCli(['run', file, '--json', '--db', ':memory:'], { env });
          assert.equal(cli.status, 0, cli.stderr);
          [attempt] = JSON.parse(cli.stdout).attempts;
        } else {
          // The control's agent is Witness's own user: as root, sandbox: none would give it a uid of its
          // own, which cannot enter /root (none-agent-user.heavy.test.ts).
          const loaded = await loadCampaignFile(file);
          const settings = await resolveSandboxSettings({
            mode: 'none',
            hostEnv: env,
            runningAsRoot: false,
            campaignFile: file,
          });
          const result = await runCampaign({
            campaign: loaded,
            target: createTarget(loaded.target, { env, sandbox: settings }),
          });
          attempt = { reply: result.attempts[0]?.reply ?? null };
        }
        const read = Object.fromEntries(
          String(attempt.reply)
            .trim()
            .split('\n')
            .map((line) => line.split('=') as [string, string]),
        );
        return { attempt, read };
      };

      it('reads no sibling project, other campaign, or credential beside a PATH entry', async () => {
        const { attempt, read } = await run('bwrap');
        assert.deepEqual(read, {
          siblingEnv: 'refused',
          otherMemory: 'refused',
          opencodeAuth: 'refused',
          cargoCredentials: 'refused',
        });
        // What was shown, on the record: the campaign directory and the PATH entries themselves.
        assert.deepEqual(attempt.shownPaths, [
          join(host.operatorHome, '.cargo/bin'),
          join(host.operatorHome, '.local/bin'),
          host.campaignDir,
        ]);
        // Control: uncontained, the same probe reads every one of them.
        const control = await run('none');
        assert.deepEqual(control.read, {
          siblingEnv: 'SECRET-siblingEnv',
          otherMemory: 'SECRET-otherMemory',
          opencodeAuth: 'SECRET-opencodeAuth',
          cargoCredentials: 'SECRET-cargoCredentials',
        });
      });
    });
  }
});
