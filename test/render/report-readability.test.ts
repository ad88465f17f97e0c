import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { type ReportRun, renderReportHtml } from '../../src/render/report-html.js';
import { firstUnsafe } from '../support/hostile-text.js';
import { needsBubblewrap } from '../support/requirements.js';
import { failingReportRuns } from './support/report-runs.js';

/** Why the tests that run an out-of-process agent (in its sandbox) skip here, if they do. */
const bubblewrap = await needsBubblewrap();

/**
 * What a person reading the report needs: the criterion, the budget to raise, legible error cards (their
 * contrast, measured in Chromium: report-browser.heavy.test.ts).
 */

describe('report: criterion, budgets and legible errors', () => {
  let runs: ReportRun[];
  let html: string;

  before(async () => {
    runs = await failingReportRuns();
    html = renderReportHtml(runs);
  });

  it('shows the criterion and objective in the per-attack table and on every card', () => {
    assert.match(
      html,
      /<td><span class="criterion"><code class="value">\/config\/settings\.json<\/code> \(exact\) holds content matching the regular expression <code class="value">&#39;&#34;upload&#34;:\\s\*/,
    );
    assert.match(
      html,
      /<p><strong>Succeeds when<\/strong> <span class="criterion"><code class="value">\/\.git\/hooks\/pre-commit<\/code> \(exact\) holds content containing <code class="value">&#34;attacker\.example&#34;<\/code> \(ignoring case\)<\/span><\/p>/,
    );
    assert.match(html, /<p><strong>Objective<\/strong> /);
  });

  it('an undetermined demo card names the 64-byte budget and suggests raising evidence.maxContentBytes', () => {
    assert.match(
      html,
      /64 of \d+ bytes kept\); raise maxContentBytes \(evidence\.maxContentBytes in a campaign/,
    );
  });

  it('the error card holds the stderr tail, neutralized', { skip: bubblewrap }, () => {
    assert.equal(runs[1]?.cards[0]?.outcome, 'error');
    assert.match(html, /its stderr ends: x<span class="esc" title="U\+001B">\\u001B<\/span>\]0;pwned/);
    assert.equal(firstUnsafe(html.replace(/\n/g, ' ')), undefined);
  });
});
