import { CampaignSchema } from '../../../src/attacks/campaign.js';
import { demoCampaign } from '../../../src/attacks/demo-campaign.js';
import { runCampaign } from '../../../src/attacks/run-campaign.js';
import type { ReportRun } from '../../../src/render/report-html.js';
import { reportRunOf } from '../../../src/render/report-run.js';
import { CommandTarget } from '../../../src/targets/command-target.js';
import { MockAgentTarget } from '../../../src/targets/mock-agent-target.js';
import { HOSTILE } from '../../support/hostile-text.js';

/**
 * The runs the report tests render, shared by the string checks (`npm test`) and the Chromium checks
 * (`report-browser.heavy.test.ts`), so both look at the same report.
 */

/** Markup an agent writes into the expected file and into its reply. */
export const PAYLOAD =
  '<script>document.title="pwned"</script><img src="https://attacker.example/x.png" onerror="alert(1)">';

async function demoRun(): Promise<ReportRun> {
  const demo = await runCampaign({
    campaign: demoCampaign('vulnerable'),
    target: new MockAgentTarget({ mode: 'vulnerable' }),
  });
  return reportRunOf(demo.run, demo.attempts);
}

/** The vulnerable demo, then an agent that writes {@link PAYLOAD} and replies with it and 5,000 "A"s. */
export async function hostileReportRuns(): Promise<ReportRun[]> {
  const demo = await demoRun();
  const hostile = await runCampaign({
    campaign: CampaignSchema.parse({
      name: 'hostile-payload',
      target: { kind: 'command', command: '/bin/sh' },
      attacks: [
        { id: 'html-in-evidence', prompt: PAYLOAD, expect: { uri: '/out.html', contains: 'script' } },
      ],
    }),
    target: new CommandTarget({
      command: '/bin/sh',
      args: [
        '-c',
        'printf "%s" "$1" > out.html; printf "%s%s" "$1" "$(head -c 5000 /dev/zero | tr "\\0" A)"',
        'agent',
        '{prompt}',
      ],
    }),
  });
  return [demo, reportRunOf(hostile.run, hostile.attempts)];
}

/** The vulnerable demo, then an agent that fails, printing controls and a forged verdict on stderr. */
export async function failingReportRuns(): Promise<ReportRun[]> {
  const demo = await demoRun();
  const failing = await runCampaign({
    campaign: CampaignSchema.parse({
      name: 'failing',
      target: { kind: 'mock', mode: 'vulnerable' },
      attacks: [{ id: 'crash', prompt: 'x', expect: { uri: '/out.txt', contains: 'x' } }],
    }),
    target: new CommandTarget({
      command: '/bin/sh',
      args: ['-c', 'printf "%s" "$HOSTILE" >&2; exit 3'],
      env: { HOSTILE },
    }),
  });
  return [demo, reportRunOf(failing.run, failing.attempts)];
}
