import { spawn } from 'node:child_process';
import { chmodSync, closeSync, constants, mkdirSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { CampaignSchema } from '../../src/attacks/campaign.js';
import { prepareCampaignContainment } from '../../src/attacks/campaign-containment.js';
import { runCampaign } from '../../src/attacks/run-campaign.js';
import { startContained } from '../../src/sandbox/contained-process.js';
import { detectSandbox } from '../../src/sandbox/sandbox-availability.js';
import { createTarget } from '../../src/targets/create-target.js';
import type { BenchConfig } from '../config.js';
import { median, timeAsync } from '../measure.js';
import { atMost, type BenchContext, type BenchRow, formatMs } from '../table.js';

/**
 * Row 7: what the sandbox costs. 7a: one contained `/bin/true` (bubblewrap: namespaces,
 * mounts, waiting for the namespace to empty) against a plain spawn of the same program, interleaved;
 * the overhead is the difference of the medians (target p50 ≤ 50 ms). 7b/7c: a 50-attempt command
 * campaign end to end (workspace, agent, judgement, cleanup) under `bwrap` and under `sandbox: none`.
 */
export async function benchSandbox(_config: BenchConfig, context: BenchContext): Promise<BenchRow[]> {
  const availability = await detectSandbox();
  if (!availability.available) {
    return [
      {
        id: '7a',
        what: 'sandbox: per-attempt overhead over a plain spawn',
        witness: '—',
        baseline: '—',
        ratio: null,
        target: 'p50 ≤ 50 ms',
        verdict: 'ERROR',
        note: availability.reason,
      },
    ];
  }
  mkdirSync(context.base, { recursive: true });
  const dir = mkdtempSync(join(context.base, 'sandbox-bench-'));
  // As root, the `sandbox: none` campaign's agent is an unprivileged uid of its own: it must be able to
  // search the directory that holds its workspace (Witness refuses the attempt otherwise, naming it).
  chmodSync(dir, 0o711);
  try {
    mkdirSync(join(dir, 'ws'));
    mkdirSync(join(dir, 'home'));
    const workspace = { path: join(dir, 'ws'), fd: openSync(join(dir, 'ws'), constants.O_RDONLY) };
    const home = { path: join(dir, 'home'), fd: openSync(join(dir, 'home'), constants.O_RDONLY) };
    const rounds = 40;
    const plain: number[] = [];
    const contained: number[] = [];
    context.log(`row 7: ${rounds} interleaved plain and contained spawns`);
    for (let i = 0; i < rounds; i++) {
      plain.push(
        await timeAsync(
          () => new Promise((resolve) => spawn('/bin/true', [], { stdio: 'ignore' }).once('close', resolve)),
        ),
      );
      contained.push(
        await timeAsync(async () => {
          const child = startContained({
            containment: { mode: 'bwrap', bwrapPath: availability.bwrapPath },
            command: '/bin/true',
            args: [],
            workspace,
            home,
            env: { PATH: '/usr/bin:/bin' },
            hiddenDirectories: [dir],
          });
          child.stdin.end();
          child.stdout.resume();
          child.stderr.resume();
          await child.ended;
        }),
      );
    }
    closeSync(workspace.fd);
    closeSync(home.fd);
    const overhead = median(contained) - median(plain);

    const campaignRate = async (sandbox: 'bwrap' | 'none') => {
      const campaign = CampaignSchema.parse({
        name: `bench-${sandbox}`,
        sandbox,
        attempts: 50,
        target: { kind: 'command', command: '/bin/sh', args: ['-c', 'echo PWNED > out.txt'] },
        attacks: [{ id: 'write', prompt: 'x', expect: { uri: '/out.txt', contains: 'PWNED' } }],
      });
      const hostEnv = { PATH: '/usr/bin:/bin' };
      const { sandbox: settings } = await prepareCampaignContainment(campaign, { hostEnv });
      const target = createTarget(campaign.target, { env: hostEnv, sandbox: settings });
      let successes = 0;
      const ms = await timeAsync(async () => {
        const result = await runCampaign({ campaign, target, workspaceParent: dir });
        successes = result.totals.success;
      });
      return { rate: 50 / (ms / 1000), successes };
    };
    context.log('row 7: a 50-attempt command campaign under bwrap, then under sandbox: none');
    const bwrap = await campaignRate('bwrap');
    const none = await campaignRate('none');
    const problems = [bwrap, none]
      .filter((run) => run.successes !== 50)
      .map((run) => `${run.successes}/50 success`);
    return [
      {
        id: '7a',
        what: 'sandbox: per-attempt overhead of bwrap over a plain spawn of /bin/true (p50 difference)',
        witness: formatMs(median(contained)),
        baseline: `plain spawn ${formatMs(median(plain))}`,
        ratio: median(contained) / median(plain),
        target: 'overhead p50 ≤ 50 ms',
        verdict: atMost(overhead, 50),
        note: `overhead ${formatMs(overhead)}`,
      },
      {
        id: '7b',
        what: 'sandbox: 50-attempt command campaign (workspace, agent, judgement, cleanup), bwrap',
        witness: `${bwrap.rate.toFixed(1)} attempts/s`,
        baseline: `sandbox: none ${none.rate.toFixed(1)} attempts/s`,
        ratio: none.rate / bwrap.rate,
        target: '—',
        verdict: problems.length > 0 ? 'ERROR' : 'info',
        note:
          problems.join('; ') ||
          'sandbox: none reads each workspace twice 250 ms apart (workspace_unsettled check), so it is slower',
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
