/**
 * Regenerates docs/report-screenshot.png: runs the demo campaigns, renders the report and photographs it
 * in Debian's Chromium (headless, fresh profile, no network). Run by hand: `npx tsc && node
 * dist/scripts/report-screenshot.js`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { demoCampaign } from '../src/attacks/demo-campaign.js';
import { runCampaign } from '../src/attacks/run-campaign.js';
import { type ReportRun, renderReportHtml } from '../src/render/report-html.js';
import { MockAgentTarget } from '../src/targets/mock-agent-target.js';
import { MOCK_MODES } from '../src/targets/mock-planner.js';
import { launchChromium } from '../test/support/chromium.js';

const dir = mkdtempSync(join(tmpdir(), 'witness-shot-'));
try {
  const runs: ReportRun[] = [];
  for (const mode of MOCK_MODES) {
    const result = await runCampaign({ campaign: demoCampaign(mode), target: new MockAgentTarget({ mode }) });
    runs.push({ run: result.run, attempts: result.attempts });
  }
  const file = join(dir, 'report.html');
  writeFileSync(file, renderReportHtml(runs));
  const context = await launchChromium(join(dir, 'profile'), { width: 1200, height: 1500 });
  try {
    const page = await context.newPage();
    await page.goto(pathToFileURL(file).href);
    await page.screenshot({ path: 'docs/report-screenshot.png' });
  } finally {
    await context.close();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
