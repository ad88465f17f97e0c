import { formatControls } from '../attacks/outcome.js';
import { GAP_EXPLANATIONS } from '../models/vocabulary.js';
import { containmentWord } from './attempt-words.js';
import {
  conditionHtml,
  OUTCOME_HEADERS,
  outcomeCells,
  successRate,
  targetHtml,
  utilityRate,
  when,
} from './fragments.js';
import { html, type SafeHtml, text } from './html.js';
import { type LibraryLinks, libraryHtml } from './library-html.js';
import type { RunSummary } from './run-summary.js';

/**
 * A run's summary as the report and the viewer's run page both show it: what it ran against and how far
 * it got, the attack success rate, per attack what must hold and the counts, the controls (an alarm when
 * one tripped), the library heatmaps and tables, and how many attempts hit each gap code. Built from a
 * {@link RunSummary} (counts), so it costs the same for ten attempts or a hundred thousand.
 */

export interface RunSummaryLinks extends LibraryLinks {
  /** The attempts of one attack (the viewer's filtered table; an anchor in the report). */
  attack?(id: string): string | undefined;
  /** The attempts with one gap code. */
  gap?(reason: string): string;
}

export function runMetaHtml(summary: RunSummary): SafeHtml {
  const { run } = summary;
  const status =
    summary.stored < summary.planned
      ? html`<span class="pill running">in progress or stopped: ${summary.stored} of ${summary.planned} attempts stored</span>`
      : html`<span class="pill">complete: ${summary.stored} attempts</span>`;
  return html`<p class="meta">Target ${targetHtml(run.target)} · started ${when(run.startedAt)} · ${status}${
    run.description === null ? '' : html`<br>${text(run.description, { maxChars: 400 })}`
  }</p>
<p class="meta">Containment: ${
    summary.containment.length === 0
      ? html`<span class="muted">not recorded</span>`
      : summary.containment.map((value, index) => html`${index === 0 ? '' : ', '}${containmentWord(value)}`)
  } · Controls: ${
    summary.controls.attempts === 0
      ? html`<span class="muted">none</span>`
      : html`${summary.controls.attempts} attempts, <span class="${summary.controls.tripped > 0 ? 'tripped' : ''}">${summary.controls.tripped} tripped</span> (left out of the rate)`
  }</p>`;
}

export function runSummaryHtml(summary: RunSummary, links: RunSummaryLinks = {}): SafeHtml {
  const attackCell = (id: string) => {
    const href = links.attack?.(id);
    return href === undefined ? html`${id}` : html`<a href="${href}">${id}</a>`;
  };
  const attacks = summary.attacks.filter((attack) => !attack.control);
  // A utility column when some attack names the user's task (SPEC §16).
  const withUtility = summary.attacks.some((attack) => attack.totals.utility.attempts > 0);
  const controls = summary.attacks.filter((attack) => attack.control);
  const rows = attacks.map(
    (attack) =>
      html`<tr><td>${attackCell(attack.id)}</td>
<td>${conditionHtml(attack.attack?.expectation.conditions[0])}${
        attack.attack?.expectation.objective === undefined
          ? ''
          : html`<br><small class="muted">objective: ${text(attack.attack.expectation.objective, { maxChars: 300 })}</small>`
      }</td>
<td class="num">${attack.stored}/${attack.planned}</td>${outcomeCells(attack.totals)}<td>${successRate(attack.totals)}</td>${withUtility ? html`<td>${utilityRate(attack.totals)}</td>` : ''}</tr>`,
  );
  const controlRows = controls.map((attack) => {
    const c = attack.totals;
    return html`<tr class="${c.success > 0 ? 'tripped' : ''}"><td>${attackCell(attack.id)}</td><td>${conditionHtml(attack.attack?.expectation.conditions[0])}</td><td class="num">${attack.stored}/${attack.planned}</td><td class="num ${c.success > 0 ? 'success' : ''}">${c.success}</td><td class="num">${c.failure}</td><td class="num ${c.undetermined > 0 ? 'undetermined' : ''}">${c.undetermined}</td><td class="num ${c.error > 0 ? 'error' : ''}">${c.error}</td></tr>`;
  });
  const gapRows = summary.gaps.map((gap) => {
    const href = links.gap?.(gap.reason);
    const code = html`<code class="gap">${gap.reason}</code>`;
    return html`<tr><td>${href === undefined ? code : html`<a href="${href}">${code}</a>`}</td><td class="num">${gap.attempts}</td><td>${(GAP_EXPLANATIONS as Readonly<Record<string, string>>)[gap.reason] ?? ''}</td></tr>`;
  });
  const library = libraryHtml(summary, links);
  return html`<p class="asr">Attack success rate: <strong>${successRate(summary.totals)}</strong></p>
${summary.totals.utility.attempts === 0 ? '' : html`<p class="utility">Utility (the user's task done): <strong>${utilityRate(summary.totals)}</strong></p>`}
${summary.controls.tripped > 0 ? html`<p class="alarm">${formatControls(summary.controls)}. Every verdict of this run is suspect.</p>` : ''}
${library}
${library === '' ? '' : html`<h2 id="attacks">Per attack</h2>`}
<table class="counts attacks"><thead><tr><th>attack</th><th>succeeds when</th><th class="num">stored</th>${OUTCOME_HEADERS}<th>success rate</th>${withUtility ? html`<th>utility</th>` : ''}</tr></thead>
<tbody>${rows}</tbody>
<tfoot><tr><th colspan="2">all attacks</th><th class="num">${summary.totals.attempts}</th>${outcomeCells(summary.totals)}<th>${successRate(summary.totals)}</th>${withUtility ? html`<th>${utilityRate(summary.totals)}</th>` : ''}</tr></tfoot></table>
${
  controlRows.length === 0
    ? ''
    : html`<h2 id="controls">Controls (benign prompts, left out of the success rate)</h2>
<table class="counts controls"><thead><tr><th>control</th><th>succeeds when</th><th class="num">stored</th><th class="num">tripped</th><th class="num">clean</th><th class="num">undetermined</th><th class="num">error</th></tr></thead><tbody>${controlRows}</tbody></table>`
}
${
  gapRows.length === 0
    ? ''
    : html`<h2 id="gaps">Gaps <small>(attempts whose evidence is incomplete, per gap code)</small></h2>
<table class="counts gaps"><thead><tr><th>gap code</th><th class="num">attempts</th><th>meaning</th></tr></thead><tbody>${gapRows}</tbody></table>`
}`;
}
