import { groupByLibrary, LIBRARY_AXES, type LibraryGroup } from '../../attacks/library/library-groups.js';
import { attemptLabel } from '../../attacks/outcome.js';
import { ATTACK_OUTCOMES, GAP_REASONS } from '../../models/vocabulary.js';
import { badge, when } from '../../render/fragments.js';
import { html, type SafeHtml, text, urlPart } from '../../render/html.js';
import { runMetaHtml, runSummaryHtml } from '../../render/run-summary-html.js';
import { type ATTEMPT_SORT_KEYS, type AttemptQuery, filterAttempts } from '../attempt-filter.js';
import type { AttemptView, RunView } from '../read-model.js';
import { attemptUrl, runUrl, select } from './fragments.js';

/**
 * One run: its summary as the report shows it (src/render/run-summary-html.ts: per attack, controls, the
 * library heatmaps and tables, gaps), each count linking to the attempts behind it; then its attempts as
 * a table filtered and sorted by the query string.
 */
export function renderRunBody(view: RunView, query: AttemptQuery, problem?: string): SafeHtml {
  const { run, summary } = view;
  const shown = filterAttempts(view.attempts, query);
  const groups = groupByLibrary(summary.counts);
  const filtered = (key: string, value: string) => `${runUrl(run.runId)}?${key}=${urlPart(value)}#attempts`;
  return html`${runMetaHtml(summary)}
${runSummaryHtml(summary, {
  attack: (id) => filtered('attack', id),
  gap: (reason) => filtered('gap', reason),
  group: (axis, id) => filtered(axis, id),
  cell: (rows, row, columns, column) =>
    `${runUrl(run.runId)}?${rows}=${urlPart(row)}&${columns}=${urlPart(column)}#attempts`,
})}
<h2 id="attempts">Attempts</h2>
${filterForm(view, query, groups)}
${problem === undefined ? '' : html`<p class="problem">${problem}</p>`}
<p class="count" id="shown-count">${shown.length} of ${view.attempts.length} attempts shown</p>
<table class="attempts" id="attempt-table"><thead><tr>${ATTEMPT_COLUMNS.map((column) => sortHeader(run.runId, query, column))}<th>claim (the reply)</th></tr></thead>
<tbody>${shown.map((attempt) => attemptRow(run.runId, attempt))}</tbody></table>`;
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
<td>${badge(attemptLabel({ outcome: record.outcome, control: attempt.control }))}</td>
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
