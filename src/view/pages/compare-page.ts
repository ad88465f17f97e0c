import type { OutcomeTotals } from '../../attacks/outcome.js';
import { html, type SafeHtml, text } from '../../render/html.js';
import type { RunView } from '../read-model.js';
import { compareRuns } from '../run-comparison.js';
import {
  attemptUrl,
  badge,
  describeTarget,
  OUTCOME_HEADERS,
  outcomeCells,
  runUrl,
  select,
  successRate,
  utilityRate,
  when,
} from './fragments.js';

/** The form that picks two runs (shown alone when none is chosen, and above a comparison). */
export function renderCompareForm(runs: readonly RunView[], left?: string, right?: string): SafeHtml {
  if (runs.length < 2) {
    return html`<p class="empty">Comparing needs two stored runs; the memory holds ${runs.length}.</p>`;
  }
  const choices = runs.map((entry) => ({
    value: entry.run.runId,
    label: `${Array.from(entry.run.campaign).slice(0, 60).join('')} · ${entry.run.runId}`,
  }));
  return html`<form class="compare" method="get" action="/compare">
${select('a', 'Left', choices, left ?? runs[1]?.run.runId)}
${select('b', 'Right', choices, right ?? runs[0]?.run.runId)}
<button type="submit">Compare</button></form>`;
}

/**
 * Two runs side by side: per attack the counts, attack success rate and utility of each (the defence
 * trade-off: a guarded agent should keep its utility as its success rate falls), then the attempts whose
 * outcome changed.
 */
export function renderComparison(left: RunView, right: RunView): SafeHtml {
  const comparison = compareRuns(left, right);
  const side = (view: RunView, label: string) =>
    html`<div class="side"><h2>${label}: <a href="${runUrl(view.run.runId)}">${text(view.run.campaign, { maxChars: 80 })}</a></h2>
<p class="meta"><code class="id">${view.run.runId}</code><br>Target <code>${describeTarget(view.run)}</code> · started ${when(view.run.startedAt)}</p>
<p class="asr">Attack success rate: <strong>${successRate(view.totals)}</strong></p>
<p class="utility">Utility (the user's task done): <strong>${utilityRate(view.totals)}</strong></p></div>`;
  const cells = (totals: OutcomeTotals | undefined) =>
    totals === undefined
      ? html`<td colspan="6" class="muted">not in this run</td>`
      : html`${outcomeCells(totals)}<td>${successRate(totals)}</td><td>${utilityRate(totals)}</td>`;
  const rows = comparison.attacks.map(
    (entry) =>
      html`<tr data-attack="${entry.attack}"><th scope="row">${entry.attack}${entry.control ? html` <span class="pill">control</span>` : ''}</th>${cells(entry.left)}${cells(entry.right)}</tr>`,
  );
  const changed = comparison.changed.map(
    (change) =>
      html`<tr class="changed"><td>${change.attack}</td><td class="num">${change.attempt}${change.round === undefined ? '' : ` · round ${change.round}`}</td>
<td><a href="${attemptUrl(left.run.runId, change.attack, change.attempt, change.round)}">${badge(change.left)}</a></td>
<td>→</td>
<td><a href="${attemptUrl(right.run.runId, change.attack, change.attempt, change.round)}">${badge(change.right)}</a></td></tr>`,
  );
  return html`<section class="sides">${side(left, 'Left')}${side(right, 'Right')}</section>
<table class="compare-table"><thead>
<tr><th rowspan="2">attack</th><th colspan="6" class="group">left</th><th colspan="6" class="group">right</th></tr>
<tr>${OUTCOME_HEADERS}<th>success rate</th><th>utility</th>${OUTCOME_HEADERS}<th>success rate</th><th>utility</th></tr></thead>
<tbody>${rows}</tbody></table>
<h2 id="changed">Attempts that changed outcome</h2>
<p class="count">${comparison.changed.length} of ${comparison.paired} paired attempts (same attack and attempt number) changed outcome.</p>
${
  changed.length === 0
    ? ''
    : html`<table class="changed-table"><thead><tr><th>attack</th><th class="num">#</th><th>left</th><th></th><th>right</th></tr></thead><tbody>${changed}</tbody></table>`
}`;
}
