import { containmentWord } from '../../render/attempt-words.js';
import { OUTCOME_HEADERS, outcomeCells, successRate, targetHtml, when } from '../../render/fragments.js';
import { html, type SafeHtml, text } from '../../render/html.js';
import type { RunSummary } from '../../render/run-summary.js';
import { runUrl, select } from './fragments.js';

/** The list of stored runs, newest first, with a form to compare two of them. */
export function renderRunsBody(runs: readonly RunSummary[], location: string): SafeHtml {
  if (runs.length === 0) {
    return html`<p class="empty">No campaign run is stored in <code>${location}</code> yet. Start one with <code>witness run campaign.yaml</code> on the same database; it appears here as its attempts are stored.</p>`;
  }
  // Controls and containment get a column only when some run records them.
  const withControls = runs.some((entry) => entry.controls.attempts > 0);
  const withContainment = runs.some((entry) => entry.containment.length > 0);
  const rows = runs.map((entry) => {
    const { run, totals } = entry;
    const progress =
      entry.stored < entry.planned
        ? html` <span class="pill running">${entry.stored}/${entry.planned} stored</span>`
        : '';
    return html`<tr data-run="${run.runId}">
<td><a href="${runUrl(run.runId)}">${text(run.campaign, { maxChars: 80 })}</a>${progress}<span class="sub"><code class="id">${run.runId}</code></span></td>
<td>${targetHtml(run.target)}</td>
<td>${when(run.startedAt)}</td>
<td class="num">${totals.attempts}</td>${outcomeCells(totals)}
<td>${successRate(totals)}</td>
${withControls ? html`<td>${entry.controls.attempts === 0 ? html`<span class="muted">none</span>` : html`${entry.controls.attempts} attempts, <span class="${entry.controls.tripped > 0 ? 'tripped' : ''}">${entry.controls.tripped} tripped</span>`}</td>` : ''}
${withContainment ? html`<td>${entry.containment.length === 0 ? html`<span class="muted">not recorded</span>` : entry.containment.map(containmentWord).join(', ')}</td>` : ''}
</tr>`;
  });
  return html`<p class="lead">Verdicts come from what each agent did to its workspace, read after the attempt, never from its reply. Undetermined attempts are counted apart, never as failures.</p>
<table class="runs">
<thead><tr><th>campaign · run</th><th>target</th><th>started (UTC)</th><th class="num">attempts</th>${OUTCOME_HEADERS}<th>attack success rate</th>${withControls ? html`<th>controls</th>` : ''}${withContainment ? html`<th>containment</th>` : ''}</tr></thead>
<tbody>${rows}</tbody></table>
<form class="compare" method="get" action="/compare">
<h2>Compare two runs</h2>
${compareSelects(runs)}
<button type="submit">Compare</button>
</form>`;
}

/** The two run pickers of a comparison (the newest run on the right, the one before it on the left). */
export function compareSelects(runs: readonly RunSummary[], left?: string, right?: string): SafeHtml {
  const choices = runs.map((entry) => ({
    value: entry.run.runId,
    label: `${Array.from(entry.run.campaign).slice(0, 60).join('')} · ${entry.run.runId}`,
  }));
  return html`${select('a', 'Left', choices, left ?? runs[1]?.run.runId)}
${select('b', 'Right', choices, right ?? runs[0]?.run.runId)}`;
}
