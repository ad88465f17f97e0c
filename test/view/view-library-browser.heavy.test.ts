// biome-ignore-all lint/performance/useDomNodeTextContent: innerText is what a person sees (rendered, CSS applied), which is what this test checks
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext } from 'playwright-core';
import { CampaignSchema } from '../../src/attacks/campaign.js';
import { expandMatrix } from '../../src/attacks/library/matrix.js';
import { MemoryAttemptRecorder } from '../../src/attacks/memory-recorder.js';
import { runCampaign } from '../../src/attacks/run-campaign.js';
import { type MemoryReader, openMemoryReader } from '../../src/memory/memory-reader.js';
import { MockAgentTarget } from '../../src/targets/mock-agent-target.js';
import { startViewServer, type ViewServer } from '../../src/view/view-server.js';
import { chromiumMissing, launchChromium } from '../support/chromium.js';
import { buildMemoryFile } from './support.js';

/**
 * What a person sees of the library grouping in Debian's Chromium (headless, fresh profile): the three
 * tables under the per-attack table, a group's link filtering the attempts, the axis filters of the form.
 * The run: 2 objectives × 3 carriers × 2 strategies (12 attacks) against the vulnerable mock, which
 * follows plain lines in README.md and in the issue text, never in package.json, never base64.
 */

describe('witness view in Chromium: the attack library grouping', {
  skip: chromiumMissing,
}, () => {
  let dir: string;
  let reader: MemoryReader;
  let viewer: ViewServer;
  let browser: BrowserContext;
  let runId = '';

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'witness-view-library-browser-'));
    const db = join(dir, 'witness.db');
    await buildMemoryFile(db, async (memory) => {
      const result = await runCampaign({
        campaign: CampaignSchema.parse({
          name: 'library-matrix',
          target: { kind: 'mock', mode: 'vulnerable' },
          attacks: expandMatrix({
            objectives: ['npmrc-registry', 'agent-rules-file'],
            carriers: ['readme', 'issue-text', 'package-json'],
            strategies: ['plain', 'base64'],
          }),
        }),
        target: new MockAgentTarget({ mode: 'vulnerable' }),
        recorder: new MemoryAttemptRecorder(memory),
      });
      runId = result.run.runId;
    });
    reader = await openMemoryReader(db);
    viewer = await startViewServer({ reader });
    browser = await launchChromium(join(dir, 'profile'), { width: 1280, height: 860 });
    // The printed URL once: its token becomes the profile's cookie and leaves the address bar.
    const first = await browser.newPage();
    await first.goto(viewer.url);
    assert.equal(first.url(), viewer.origin);
    await first.close();
  });
  after(async () => {
    await browser?.close();
    await viewer?.close();
    await reader?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows the groups, filters by a group link and by the axis selects, loading nothing from elsewhere', async () => {
    const page = await browser.newPage();
    const requests: string[] = [];
    const errors: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    page.on('pageerror', (error) => errors.push(error.message));
    try {
      await page.goto(`${viewer.origin}runs/${runId}`);
      assert.equal(
        await page.locator('#library').innerText(),
        'Attack library: by objective, carrier and strategy',
      );
      const rows = async (axis: string) =>
        (await page.locator(`#library-${axis} tbody tr`).allInnerTexts()).map((row) =>
          row.split('\t').map((cell) => cell.trim()),
        );
      assert.deepEqual(await rows('objective'), [
        ['npmrc-registry', '6', '2', '4', '0', '0', '2/6 decided (33.3%)'],
        ['agent-rules-file', '6', '2', '4', '0', '0', '2/6 decided (33.3%)'],
      ]);
      assert.deepEqual(await rows('carrier'), [
        ['readme', '4', '2', '2', '0', '0', '2/4 decided (50%)'],
        ['issue-text', '4', '2', '2', '0', '0', '2/4 decided (50%)'],
        ['package-json', '4', '0', '4', '0', '0', '0/4 decided (0%)'],
      ]);
      assert.deepEqual(await rows('strategy'), [
        ['plain', '6', '4', '2', '0', '0', '4/6 decided (66.7%)'],
        ['base64', '6', '0', '6', '0', '0', '0/6 decided (0%)'],
      ]);
      // The heatmaps: objective × carrier (2 × 3 cells) and objective × strategy (2 × 2), each cell the
      // rate and successes/decided; a cell links to its attempts.
      const maps = page.locator('figure.heatmap svg');
      assert.equal(await maps.count(), 2);
      assert.deepEqual(await maps.first().locator('a > g > title').allTextContents(), [
        'objective npmrc-registry, carrier readme: 1 success, 1 failure, 0 undetermined, 0 error',
        'objective npmrc-registry, carrier issue-text: 1 success, 1 failure, 0 undetermined, 0 error',
        'objective npmrc-registry, carrier package-json: 0 success, 2 failure, 0 undetermined, 0 error',
        'objective agent-rules-file, carrier readme: 1 success, 1 failure, 0 undetermined, 0 error',
        'objective agent-rules-file, carrier issue-text: 1 success, 1 failure, 0 undetermined, 0 error',
        'objective agent-rules-file, carrier package-json: 0 success, 2 failure, 0 undetermined, 0 error',
      ]);
      const box = await maps.first().boundingBox();
      assert.ok(box !== null && box.width >= 600, `the heatmap is ${box?.width} pixels wide`);
      await maps.last().locator('a').first().click();
      await page.waitForURL(`${viewer.origin}runs/${runId}?objective=npmrc-registry&strategy=plain#attempts`);
      assert.equal(await page.locator('#shown-count').innerText(), '3 of 12 attempts shown');
      await page.goto(`${viewer.origin}runs/${runId}`);

      await page.locator('#library-carrier').getByRole('link', { name: 'package-json' }).click();
      await page.waitForURL(`${viewer.origin}runs/${runId}?carrier=package-json#attempts`);
      assert.equal(await page.locator('#shown-count').innerText(), '4 of 12 attempts shown');
      assert.equal(await page.locator('form.filters select[name="carrier"]').inputValue(), 'package-json');

      await page.locator('form.filters select[name="carrier"]').selectOption('');
      await page.locator('form.filters select[name="strategy"]').selectOption('plain');
      await page.locator('form.filters select[name="outcome"]').selectOption('success');
      await page.locator('form.filters button').click();
      await page.waitForURL(/strategy=plain/);
      const shown = await page
        .locator('#attempt-table tbody tr')
        .evaluateAll((list) => list.map((row) => row.getAttribute('data-attack')));
      assert.deepEqual(shown, [
        'npmrc-registry.readme.plain',
        'npmrc-registry.issue-text.plain',
        'agent-rules-file.readme.plain',
        'agent-rules-file.issue-text.plain',
      ]);
      assert.deepEqual(errors, []);
      assert.ok(
        requests.every((url) => url.startsWith(viewer.origin)),
        requests.join('\n'),
      );
    } finally {
      await page.close();
    }
  });
});
