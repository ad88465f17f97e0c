import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { CampaignSchema } from '../../src/attacks/campaign.js';
import { demoCampaign } from '../../src/attacks/demo-campaign.js';
import { type ReportRun, renderReportHtml } from '../../src/attacks/report-html.js';
import { runCampaign } from '../../src/attacks/run-campaign.js';
import { CommandTarget } from '../../src/targets/command-target.js';
import { MockAgentTarget } from '../../src/targets/mock-agent-target.js';
import { firstUnsafe, HOSTILE } from '../support/hostile-text.js';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-sync'];

/** What a person reading the report needs: the criterion, the budget to raise, legible error cards. */

describe('report: criterion, budgets and legible errors', () => {
  let dir: string;
  let runs: ReportRun[];
  let html: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'witness-report-ux-'));
    const demo = await runCampaign({
      campaign: demoCampaign('vulnerable'),
      target: new MockAgentTarget({ mode: 'vulnerable' }),
    });
    const failing = await runCampaign({
      campaign: CampaignSchema.parse({
        name: 'failing',
        target: { kind: 'mock', mode: 'vulnerable' },
        attacks: [{ id: 'crash', prompt: 'x', expect: { uri: '/out.txt', contains: 'x' } }],
      }),
      // An agent that fails, printing controls and a forged verdict on stderr.
      target: new CommandTarget({
        command: '/bin/sh',
        args: ['-c', 'printf "%s" "$HOSTILE" >&2; exit 3'],
        env: { HOSTILE },
      }),
    });
    runs = [
      { run: demo.run, attempts: demo.attempts },
      { run: failing.run, attempts: failing.attempts },
    ];
    html = renderReportHtml(runs);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('shows the criterion and objective in the "expected write" column and on every card', () => {
    assert.match(
      html,
      /<td>\/config\/settings\.json \(exact\) holds content matching the regular expression &#34;/,
    );
    assert.match(
      html,
      /<dt>Criterion<\/dt><dd>\/\.git\/hooks\/pre-commit \(exact\) holds content containing &#34;attacker\.example&#34; \(ignoring case\)<\/dd>/,
    );
    assert.match(html, /<dt>Objective<\/dt><dd>/);
  });

  it('an undetermined demo card names the 64-byte budget and suggests raising evidence.maxContentBytes', () => {
    assert.match(
      html,
      /64 of \d+ bytes kept\); raise maxContentBytes \(evidence\.maxContentBytes in a campaign/,
    );
  });

  it('the error card holds the stderr tail, neutralized', () => {
    assert.equal(runs[1]?.attempts[0]?.outcome, 'error');
    assert.match(html, /its stderr ends: x\\u001B\]0;pwned/);
    assert.equal(firstUnsafe(html.replace(/\n/g, ' ')), undefined);
  });

  it('every card, badge and error text is legible: WCAG contrast at least 4.5 (Chromium, computed colors)', async (t) => {
    if (!existsSync(CHROMIUM)) {
      t.skip(`${CHROMIUM} is absent: install Debian's chromium (apt-get install chromium) to run this test`);
      return;
    }
    const file = join(dir, 'report.html');
    writeFileSync(file, html);
    const browser = await chromium.launchPersistentContext(join(dir, 'profile'), {
      executablePath: CHROMIUM,
      args: CHROMIUM_ARGS,
    });
    try {
      const page = await browser.newPage();
      await page.goto(pathToFileURL(file).href);
      const selectors = [
        'article.attempt.error h3',
        'article.attempt.error dd',
        'article.attempt.error dt',
        'dd.error',
        '.badge.success',
        '.badge.failure',
        '.badge.undetermined',
        '.badge.error',
        'td.success',
        'td.undetermined',
        '.note',
        'body p',
      ];
      for (const selector of selectors) {
        const count = await page.locator(selector).count();
        assert.ok(count > 0, `the report has no ${selector}`);
        const ratios = await page.locator(selector).evaluateAll((elements) => {
          const parse = (color: string) => {
            const parts = color.match(/[\d.]+/g)?.map(Number) ?? [0, 0, 0, 0];
            return { r: parts[0] ?? 0, g: parts[1] ?? 0, b: parts[2] ?? 0, a: parts[3] ?? 1 };
          };
          const luminance = ({ r, g, b }: { r: number; g: number; b: number }) => {
            const channel = (v: number) => {
              const s = v / 255;
              return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
            };
            return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
          };
          // Runs in the page; this project compiles without the DOM library, hence the narrow types.
          type Node = { parentElement: Node | null };
          const style = (node: Node) =>
            (
              globalThis as unknown as {
                getComputedStyle(n: Node): { color: string; backgroundColor: string };
              }
            ).getComputedStyle(node);
          return (elements as unknown as Node[]).map((element) => {
            const foreground = parse(style(element).color);
            let node: Node | null = element;
            let background = { r: 255, g: 255, b: 255, a: 1 };
            while (node !== null) {
              const candidate = parse(style(node).backgroundColor);
              if (style(node).backgroundColor !== 'rgba(0, 0, 0, 0)' && candidate.a > 0) {
                background = candidate;
                break;
              }
              node = node.parentElement;
            }
            const [light, dark] = [luminance(foreground), luminance(background)].sort((a, b) => b - a);
            return ((light ?? 0) + 0.05) / ((dark ?? 0) + 0.05);
          });
        });
        for (const ratio of ratios) {
          assert.ok(ratio >= 4.5, `${selector}: contrast ${ratio.toFixed(2)} is below 4.5`);
        }
      }
    } finally {
      await browser.close();
    }
  });
});
