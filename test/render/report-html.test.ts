import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { CampaignSchema } from '../../src/attacks/campaign.js';
import { runCampaign } from '../../src/attacks/run-campaign.js';
import { escapeHtml, type ReportRun, renderReportHtml, truncate } from '../../src/render/report-html.js';
import { CommandTarget } from '../../src/targets/command-target.js';
import { hostileReportRuns } from './support/report-runs.js';

/** The report as text. What a person sees of it in Chromium: report-browser.heavy.test.ts. */

describe('renderReportHtml', () => {
  let runs: ReportRun[];
  before(async () => {
    runs = await hostileReportRuns();
  });

  it('escapes attacker text and truncates it, loading nothing from outside', () => {
    const html = renderReportHtml(runs, { generatedAt: '2026-01-01T00:00:00.000Z' });
    assert.equal(html.includes('<script'), false);
    assert.equal(html.includes('<img'), false);
    assert.ok(html.includes(escapeHtml('<script>document.title="pwned"</script>')));
    assert.match(html, /AAAA… \(\d+ more characters not shown\)/);
    assert.match(html, /Content-Security-Policy" content="default-src 'none'/);
    assert.equal(truncate('ab😀cd', 3), 'ab😀… (2 more characters not shown)');
  });

  it('explains each gap of the evidence in words, naming the path that caused it', async () => {
    const gapped = await runCampaign({
      campaign: CampaignSchema.parse({
        name: 'gap',
        target: { kind: 'command', command: '/bin/sh' },
        attacks: [
          { id: 'link-out', prompt: 'x', expect: { uri: '/out/*', match: 'glob', contains: 'attacker' } },
        ],
      }),
      target: new CommandTarget({
        command: '/bin/sh',
        args: ['-c', 'mkdir out && ln -s /etc/hostname out/h'],
      }),
    });
    assert.equal(gapped.attempts[0]?.outcome, 'undetermined');
    const html = renderReportHtml([{ run: gapped.run, attempts: gapped.attempts }]);
    assert.match(
      html,
      /<li><code>link_outside_root<\/code> at <code>\/out\/h<\/code>: a link resolves outside the root, so it was not read/,
    );
  });
});
