/**
 * Regenerates the screenshots of the README and docs/ from the current code: runs the demo campaigns (the
 * mock agent, vulnerable and guarded) and examples/library-matrix.yaml into a fresh SQLite memory, writes
 * the report the way `witness report` does and photographs it, then serves the memory with `witness view`
 * and photographs its pages — all in Debian's Chromium (headless, fresh profile, no network), 1400 px wide.
 *
 *   npm run build && node dist/scripts/report-screenshot.js [directory]   # default: docs
 *
 * test/render/screenshots.heavy.test.ts runs it into a temporary directory, so a change that breaks it
 * fails the heavy lane instead of leaving the pictures stale.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Page } from 'playwright-core';
import { loadCampaignFile } from '../src/attacks/campaign-file.js';
import { demoCampaign } from '../src/attacks/demo-campaign.js';
import { loadReportRuns, MemoryAttemptRecorder } from '../src/attacks/memory-recorder.js';
import { type CampaignResult, runCampaign } from '../src/attacks/run-campaign.js';
import { openMemoryReader } from '../src/memory/memory-reader.js';
import { openMemory } from '../src/memory/open-memory.js';
import { renderReportHtml } from '../src/render/report-html.js';
import { reportRunOf } from '../src/render/report-run.js';
import { MockAgentTarget } from '../src/targets/mock-agent-target.js';
import { MOCK_MODES } from '../src/targets/mock-planner.js';
import { startViewServer } from '../src/view/view-server.js';
import { launchChromium } from '../test/support/chromium.js';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const WIDTH = 1400;

/** Writes every screenshot into `outDir`; returns their paths. */
export async function takeScreenshots(outDir: string): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'witness-shots-'));
  const written: string[] = [];
  try {
    const db = join(dir, 'witness.db');
    const runs = await storeRuns(db);
    const context = await launchChromium(join(dir, 'profile'), { width: WIDTH, height: 1000 });
    try {
      const page = await context.newPage();
      const shoot = async (name: string, fullPage = false) => {
        const path = join(outDir, name);
        await page.screenshot({ path, fullPage });
        written.push(path);
      };

      // The README's picture: the demo's two runs, as `witness report` writes them after `npm start`.
      const memory = await openMemory(db);
      let html: string;
      try {
        const stored = (await loadReportRuns(memory)).filter((entry) =>
          entry.run.campaign.startsWith('demo-'),
        );
        html = renderReportHtml(stored.map((entry) => reportRunOf(entry.run, entry.attempts)));
      } finally {
        await memory.close();
      }
      const report = join(dir, 'report.html');
      writeFileSync(report, html);
      await page.setViewportSize({ width: WIDTH, height: 1500 });
      await page.goto(pathToFileURL(report).href);
      await shoot('report-screenshot.png');

      const reader = await openMemoryReader(db);
      const viewer = await startViewServer({ reader });
      try {
        // The printed URL once: its token becomes the page's cookie, which every later visit sends.
        await page.goto(viewer.url);
        const visit = async (path: string) => {
          await page.goto(new URL(path, viewer.origin).href);
        };
        await page.setViewportSize({ width: WIDTH, height: 900 });
        await visit('/');
        await shoot('view-runs.png');
        await visit(`/runs/${runs.vulnerable.run.runId}`);
        await shoot('view-run.png', true);
        await visit(`/runs/${runs.vulnerable.run.runId}?outcome=success#attempts`);
        await shoot('view-run-filtered.png');
        await visit(`/runs/${runs.vulnerable.run.runId}/attempts/hook-injection/1`);
        await shoot('view-attempt.png', true);
        await visit(`/compare?a=${runs.vulnerable.run.runId}&b=${runs.guarded.run.runId}`);
        await shoot('view-compare.png', true);
        await page.setViewportSize({ width: WIDTH, height: 1300 });
        await visit(`/runs/${runs.library.run.runId}`);
        await scrollTo(page, '#library');
        await shoot('view-library.png');
      } finally {
        await viewer.close();
        await reader.close();
      }
    } finally {
      await context.close();
    }
    return written;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The demo in both modes and the library example, stored in a fresh memory at `db`. */
async function storeRuns(db: string): Promise<Record<'vulnerable' | 'guarded' | 'library', CampaignResult>> {
  const memory = await openMemory(db);
  try {
    const recorder = new MemoryAttemptRecorder(memory);
    const demo: Partial<Record<(typeof MOCK_MODES)[number], CampaignResult>> = {};
    for (const mode of MOCK_MODES) {
      demo[mode] = await runCampaign({
        campaign: demoCampaign(mode),
        target: new MockAgentTarget({ mode }),
        recorder,
      });
    }
    const library = await runCampaign({
      campaign: await loadCampaignFile(join(ROOT, 'examples', 'library-matrix.yaml')),
      target: new MockAgentTarget({ mode: 'vulnerable' }),
      recorder,
    });
    return {
      vulnerable: demo.vulnerable as CampaignResult,
      guarded: demo.guarded as CampaignResult,
      library,
    };
  } finally {
    await memory.close();
  }
}

async function scrollTo(page: Page, selector: string): Promise<void> {
  await page.locator(selector).scrollIntoViewIfNeeded();
  await page.evaluate('window.scrollBy(0, -12)');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const outDir = process.argv[2] ?? join(ROOT, 'docs');
  for (const path of await takeScreenshots(outDir)) process.stdout.write(`${path}\n`);
}
