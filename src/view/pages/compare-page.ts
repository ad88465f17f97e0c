import type { OutcomeTotals } from '../../attacks/outcome.js';
import { outcomeBarsSvg } from '../../render/comparison-svg.js';
import {
  badge,
  OUTCOME_HEADERS,
  outcomeCells,
  successRate,
  targetHtml,
  utilityRate,
  when,
} from '../../render/fragments.js';
import { html, type SafeHtml, text } from '../../render/html.js';
import type { RunSummary } from '../../render/run-summary.js';
import { type ChangedAttempts, compareAttacks } from '../run-comparison.js';
import { attemptUrl, runUrl } from './fragments.js';
import { compareSelects } from './runs-page.js';

/** The form that picks two runs (shown alone when none is chosen, and above a comparison). */
export function renderCompareForm(runs: readonly RunSummary[], left?: string, right?: string): SafeHtml {
  if (runs.length < 2) {
    return html`<p class="empty">Comparing needs two stored runs; the memory holds ${runs.length}.</p>`;
  }
  return html`<form class="compare" method="get" action="/compare">
${compareSelects(runs, left, right)}
<button type="submit">Compare</button></form>`;
}

/**
 * Two runs side by side: each attack's outcomes in both as a picture, per attack the counts, attack
 * success rate and utility of each (the defence trade-off: a guarded agent should keep its utility as its
 * success rate falls), then the attempts whose outcome changed.
 */
export function renderComparison(left: RunSummary, right: RunSummary, changes: ChangedAttempts): SafeHtml {
  const attacks = compareAttacks(left, right);
  const side = (summary: RunSummary, label: string) =>
    html`<div class="side"><h2>${label}: <a href="${runUrl(summary.run.runId)}">${text(summary.run.campaign, { maxChars: 80 })}</a></h2>
<p class="meta"><code class="id">${summary.run.runId}</code><br>Target ${targetHtml(summary.run.target)} · started ${when(summary.run.startedAt)}</p>
<p class="asr">Attack success rate: <strong>${successRate(summary.totals)}</strong></p>
<p class="utility">Utility (the user's task done): <strong>${utilityRate(summary.totals)}</strong></p></div>`;
  const cells = (totals: OutcomeTotals | undefined) =>
    totals === undefined
      ? html`<td colspan="6" class="muted">not in this run</td>`
      : html`${outcomeCells(totals)}<td>${successRate(totals)}</td><td>${utilityRate(totals)}</td>`;
  const rows = attacks.map(
    (entry) =>
      html`<tr data-attack="${entry.attack}"><th scope="row">${entry.attack}${entry.control ? html` <span class="pill">control</span>` : ''}</th>${cells(entry.left)}${cells(entry.right)}</tr>`,
  );
  const changed = changes.changed.map(
    (change) =>
      html`<tr class="changed"><td>${change.attack}</td><td class="num">${change.attempt}${change.round === undefined ? '' : ` · round ${change.round}`}</td>
<td><a href="${attemptUrl(left.run.runId, change.attack, change.attempt, change.round)}">${badge(change.left)}</a></td>
<td>→</td>
<td><a href="${attemptUrl(right.run.runId, change.attack, change.attempt, change.round)}">${badge(change.right)}</a></td></tr>`,
  );
  return html`<section class="sides">${side(left, 'Left')}${side(right, 'Right')}</section>
${outcomeBarsSvg(
  attacks.map((entry) => ({ attack: entry.attack, control: entry.control, runs: [entry.left, entry.right] })),
  ['left', 'right'],
)}
<table class="compare-table"><thead>
<tr><th rowspan="2">attack</th><th colspan="6" class="group">left</th><th colspan="6" class="group">right</th></tr>
<tr>${OUTCOME_HEADERS}<th>success rate</th><th>utility</th>${OUTCOME_HEADERS}<th>success rate</th><th>utility</th></tr></thead>
<tbody>${rows}</tbody></table>
<h2 id="changed">Attempts that changed outcome</h2>
<p class="count">${changes.total} of ${changes.paired} paired attempts (same attack and attempt number) changed outcome${changes.total > changes.changed.length ? html`; the first ${changes.changed.length} are listed` : ''}.</p>
${
  changed.length === 0
    ? ''
    : html`<table class="changed-table"><thead><tr><th>attack</th><th class="num">#</th><th>left</th><th></th><th>right</th></tr></thead><tbody>${changed}</tbody></table>`
}`;
}
