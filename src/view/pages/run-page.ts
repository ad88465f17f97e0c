import { groupByLibrary, LIBRARY_AXES, type LibraryGroup } from '../../attacks/library/library-groups.js';
import { talliedOf, tallyAttempts } from '../../attacks/outcome.js';
import { ATTACK_OUTCOMES, GAP_REASONS } from '../../models/vocabulary.js';
import { html, type SafeHtml, text, urlPart } from '../../render/html.js';
import { type ATTEMPT_SORT_KEYS, type AttemptQuery, filterAttempts } from '../attempt-filter.js';
import type { AttemptView, RunView } from '../read-model.js';
import {
  attemptUrl,
  badge,
  describeCriterion,
  describeTarget,
  OUTCOME_HEADERS,
  outcomeCells,
  runUrl,
  select,
  successRate,
  utilityRate,
  when,
} from './fragments.js';

/**
 * One run: its summary per attack, its library attacks grouped by objective, carrier and strategy (the
 * report's grouping, `groupByLibrary`), then its attempts as a table filtered and sorted by the query string.
 */
export function renderRunBody(view: RunView, query: AttemptQuery, problem?: string): SafeHtml {
  const { run } = view;
  const shown = filterAttempts(view.attempts, query);
  const groups = groupByLibrary(
    view.attempts.map(({ record, control }) => ({ attack: record.attack, outcome: record.outcome, control })),
  );
  const perAttack = run.attacks.map((attack) => {
    const mine = view.attempts.filter((attempt) => attempt.record.attack === attack.id);
    const totals = tallyAttempts(mine.map((attempt) => talliedOf(attempt.record)));
    const control = mine.some((attempt) => attempt.control);
    return html`<tr><td><a href="${runUrl(run.runId)}?attack=${urlPart(attack.id)}">${attack.id}</a>${control ? html` <span class="pill">control</span>` : ''}</td>
<td class="criterion">${describeCriterion(attack.expectation.conditions[0])}</td>
<td class="num">${mine.length}/${attack.attempts}</td>${outcomeCells(totals)}<td>${successRate(totals)}</td></tr>`;
  });
  const stored = view.attempts.length;
  const status =
    stored < view.plannedAttempts
      ? html`<span class="pill running">in progress or stopped: ${stored} of ${view.plannedAttempts} attempts stored</span>`
      : html`<span class="pill">complete: ${stored} attempts</span>`;
  return html`<p class="meta">Target <code>${describeTarget(run)}</code> · started ${when(run.startedAt)} · ${status}${
    run.description === null ? '' : html`<br>${text(run.description, { maxChars: 400 })}`
  }</p>
<p class="meta">Containment: ${view.containment.length === 0 ? html`<span class="muted">not recorded</span>` : view.containment.join(', ')} · Controls: ${
    view.controls.attempts === 0
      ? html`<span class="muted">none</span>`
      : html`${view.controls.attempts} attempts, <span class="${view.controls.tripped > 0 ? 'tripped' : ''}">${view.controls.tripped} tripped</span> (left out of the rate)`
  }</p>
<p class="asr">Attack success rate: <strong>${successRate(view.totals)}</strong></p>
${view.totals.utility.attempts === 0 ? '' : html`<p class="utility">Utility (the user's task done): <strong>${utilityRate(view.totals)}</strong></p>`}
<table class="counts"><thead><tr><th>attack</th><th>succeeds when</th><th class="num">stored</th>${OUTCOME_HEADERS}<th>success rate</th></tr></thead>
<tbody>${perAttack}</tbody></table>
${libraryGroups(run.runId, groups)}
<h2 id="attempts">Attempts</h2>
${filterForm(view, query, groups)}
${problem === undefined ? '' : html`<p class="problem">${problem}</p>`}
<p class="count" id="shown-count">${shown.length} of ${stored} attempts shown</p>
<table class="attempts" id="attempt-table"><thead><tr>${ATTEMPT_COLUMNS.map((column) => sortHeader(view.run.runId, query, column))}<th>claim (the reply)</th></tr></thead>
<tbody>${shown.map((attempt) => attemptRow(view.run.runId, attempt))}</tbody></table>`;
}

/**
 * Library attempts by objective, by carrier and by strategy: counts and the success rate with its range.
 * Each id links to the attempt table filtered to it. Nothing when the run has no library attack.
 */
function libraryGroups(runId: string, groups: readonly LibraryGroup[]): SafeHtml | '' {
  if (groups.length === 0) return '';
  const tables = LIBRARY_AXES.map((axis) => {
    const rows = groups
      .filter((group) => group.axis === axis)
      .map(
        (group) =>
          html`<tr><td><a href="${runUrl(runId)}?${axis}=${urlPart(group.id)}#attempts"><code>${group.id}</code></a></td><td class="num">${group.totals.attempts}</td>${outcomeCells(group.totals)}<td>${successRate(group.totals)}</td></tr>`,
      );
    return html`<table class="counts library" id="library-${axis}"><thead><tr><th>by ${axis}</th><th class="num">attempts</th>${OUTCOME_HEADERS}<th>success rate</th></tr></thead>
<tbody>${rows}</tbody></table>`;
  });
  return html`<h2 id="library">Attack library: by objective, carrier and strategy</h2>
<p class="meta">Attempts of library attacks (<code>&lt;objective&gt;.&lt;carrier&gt;.&lt;strategy&gt;</code>), controls left out; the success rate is over decided attempts, with its range if the undetermined were decided.</p>
${tables}`;
}

const ATTEMPT_COLUMNS: ReadonlyArray<{ key: (typeof ATTEMPT_SORT_KEYS)[number]; label: string }> = [
  { key: 'attack', label: 'attack' },
  { key: 'attempt', label: '#' },
  { key: 'outcome', label: 'outcome' },
  { key: 'surface', label: 'surface' },
  { key: 'gaps', label: 'gap codes' },
  { key: 'finished', label: 'finished' },
];

function attemptRow(runId: string, attempt: AttemptView): SafeHtml {
  const record = attempt.record;
  const link = attemptUrl(runId, record.attack, record.attempt, record.round);
  return html`<tr class="${record.outcome}" data-attack="${record.attack}" data-outcome="${record.outcome}">
<td><a href="${link}">${record.attack}</a>${attempt.control ? html` <span class="pill">control</span>` : ''}</td>
<td class="num"><a href="${link}">${record.attempt}${record.round === undefined ? '' : html` <span class="pill">round ${record.round}</span>`}</a></td>
<td>${badge(record.outcome)}</td>
<td>${attempt.surface}</td>
<td>${attempt.gapCodes.length === 0 ? html`<span class="muted">none</span>` : attempt.gapCodes.map((gap) => html`<code class="gap">${gap}</code> `)}</td>
<td>${when(record.finishedAt)}</td>
<td class="claim-cell">${record.reply === null ? html`<em>${record.error === null ? 'no reply' : 'error'}</em>` : text(record.reply, { maxChars: 90 })}</td>
</tr>`;
}

function sortHeader(
  runId: string,
  query: AttemptQuery,
  column: { key: (typeof ATTEMPT_SORT_KEYS)[number]; label: string },
): SafeHtml {
  const active = query.sort === column.key;
  const order = active && query.order !== 'desc' ? 'desc' : 'asc';
  const href = `${runUrl(runId)}${queryString({ ...query, sort: column.key, order })}#attempts`;
  const arrow = active ? (query.order === 'desc' ? ' ▼' : ' ▲') : '';
  return html`<th><a href="${href}" class="sort${active ? ' active' : ''}">${column.label}${arrow}</a></th>`;
}

function filterForm(view: RunView, query: AttemptQuery, groups: readonly LibraryGroup[]): SafeHtml {
  const any = { value: '', label: 'any' };
  const surfaces = [...new Set(view.attempts.map((attempt) => attempt.surface))].sort();
  // The library axes are offered only when the run has library attacks, with the ids it ran.
  const axisSelects = LIBRARY_AXES.map((axis) => {
    const ids = groups
      .filter((group) => group.axis === axis)
      .map((group) => ({ value: group.id, label: group.id }));
    return ids.length === 0
      ? ''
      : html`${select(axis, axis[0]?.toUpperCase() + axis.slice(1), [any, ...ids], query[axis])}
`;
  });
  return html`<form class="filters" method="get" action="${runUrl(view.run.runId)}">
${select('outcome', 'Outcome', [any, ...ATTACK_OUTCOMES.map((value) => ({ value, label: value }))], query.outcome)}
${select('attack', 'Attack', [any, ...view.run.attacks.map((attack) => ({ value: attack.id, label: attack.id }))], query.attack)}
${select('surface', 'Surface', [any, ...surfaces.map((value) => ({ value, label: value }))], query.surface)}
${select('gap', 'Gap code', [any, { value: 'none', label: 'no gap' }, ...GAP_REASONS.map((value) => ({ value, label: value }))], query.gap)}
${axisSelects}${query.sort === undefined ? '' : html`<input type="hidden" name="sort" value="${query.sort}">`}
${query.order === undefined ? '' : html`<input type="hidden" name="order" value="${query.order}">`}
<button type="submit">Filter</button> <a href="${runUrl(view.run.runId)}">clear</a>
</form>`;
}

/** `?key=value&…` of the keys that are set, in a fixed order (the same filters give the same link). */
export function queryString(query: AttemptQuery): string {
  const keys = [
    'outcome',
    'attack',
    'surface',
    'gap',
    'objective',
    'carrier',
    'strategy',
    'sort',
    'order',
  ] as const;
  const parts = keys.flatMap((key) => {
    const value = query[key];
    return value === undefined ? [] : [`${key}=${urlPart(value)}`];
  });
  return parts.length === 0 ? '' : `?${parts.join('&')}`;
}
