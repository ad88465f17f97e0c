import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { type ReportRun, renderReportHtml } from '../../src/render/report-html.js';
import { firstUnsafe } from '../support/hostile-text.js';
import { failingReportRuns } from './support/report-runs.js';

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
});
