import { createHash } from 'node:crypto';
import { groupByLibrary, LIBRARY_AXES, type LibraryGroup } from '../../attacks/library/library-groups.js';
import { attemptLabel } from '../../attacks/outcome.js';
import type { AttemptRow } from '../../memory/run-queries.js';
import { ATTACK_OUTCOMES, GAP_REASONS } from '../../models/vocabulary.js';
import { badge, when } from '../../render/fragments.js';
import { html, type SafeHtml, text, urlPart } from '../../render/html.js';
import type { RunSummary } from '../../render/run-summary.js';
import { runMetaHtml, runSummaryHtml } from '../../render/run-summary-html.js';
import type { ATTEMPT_SORT_KEYS, AttemptQuery } from '../attempt-filter.js';
import type { AttemptPageView } from '../read-model.js';
import { attemptUrl, runUrl, select } from './fragments.js';

/**
 * One run: its summary as the report shows it (src/render/run-summary-html.ts: per attack, controls, the
 * library heatmaps and tables, gaps), each count linking to the attempts behind it; then one page of its
 * attempts, filtered and ordered by the query string, with links to the first and the next page.
 */
export function renderRunBody(
  summary: RunSummary,
  page: AttemptPageView,
  query: AttemptQuery,
  problem?: string,
): SafeHtml {
  const parts = renderRunParts(summary, page, query, problem);
  return html`${parts.head}
<table class="attempts" id="attempt-table"><thead><tr>${ATTEMPT_COLUMNS.map((column) => sortHeader(summary.run.runId, query, column))}<th>claim (the reply)</th></tr></thead>
<tbody>${parts.rows.map((row) => row.html)}</tbody></table>
${parts.pages}`;
}

/**
 * The parts of a run's page a live update replaces (`/live/runs/:runId/rows`): everything above the
 * attempts (the summary and its counts, the filters, how many match), each row of the page with a digest of
 * its markup (`data-v`), so an update sends only the rows the browser does not already show, and the links
 * to the next page. The table's head depends only on the query, which an update never changes.
 */
export interface RunParts {
  head: SafeHtml;
  rows: Array<{ version: string; html: SafeHtml }>;
  pages: SafeHtml;
}

export function renderRunParts(
  summary: RunSummary,
  page: AttemptPageView,
  query: AttemptQuery,
  problem?: string,
): RunParts {
  const { run } = summary;
  const groups = groupByLibrary(summary.counts);
  const filtered = (key: string, value: string) => `${runUrl(run.runId)}?${key}=${urlPart(value)}#attempts`;
  const { after: _after, ...sameFilters } = query;
  const head = html`<div id="run-head">${runMetaHtml(summary)}
${runSummaryHtml(summary, {
  attack: (id) => filtered('attack', id),
  gap: (reason) => filtered('gap', reason),
  group: (axis, id) => filtered(axis, id),
  cell: (rows, row, columns, column) =>
    `${runUrl(run.runId)}?${rows}=${urlPart(row)}&${columns}=${urlPart(column)}#attempts`,
})}
<h2 id="attempts">Attempts</h2>
${filterForm(summary, query, groups)}
${problem === undefined ? '' : html`<p class="problem">${problem}</p>`}
<p class="count" id="shown-count">${shownCount(summary, page, query)}</p></div>`;
  const pages = html`<p class="pages" id="pages">${query.after === undefined ? '' : html`<a href="${runUrl(run.runId)}${queryString(sameFilters)}#attempts" rel="first">← first page</a> `}${
    page.next === null
      ? html`<span class="muted">last page</span>`
      : html`<a href="${runUrl(run.runId)}${queryString({ ...query, after: page.next })}#attempts" rel="next" id="next-page">next page →</a>`
  }</p>`;
  return { head, rows: page.rows.map((row) => attemptRow(run.runId, row)), pages };
}

/** How many attempts the filters keep, of how many, and which of them this page shows. */
function shownCount(summary: RunSummary, page: AttemptPageView, query: AttemptQuery): string {
  const of = `${page.matching} of ${summary.storedRounds} attempts`;
  if (query.after === undefined && page.rows.length === page.matching) return `${of} shown`;
  return `${of} match; ${query.after === undefined ? 'the first' : 'a later page of'} ${page.rows.length} shown`;
}

const ATTEMPT_COLUMNS: ReadonlyArray<{ key: (typeof ATTEMPT_SORT_KEYS)[number]; label: string }> = [
  { key: 'attack', label: 'attack' },
  { key: 'attempt', label: '#' },
  { key: 'outcome', label: 'outcome' },
  { key: 'surface', label: 'surface' },
  { key: 'gaps', label: 'gap codes' },
  { key: 'finished', label: 'finished' },
];

/** A row of the attempts table, and the digest of its markup that names this version of it. */
function attemptRow(runId: string, row: AttemptRow): { version: string; html: SafeHtml } {
  const cells = attemptCells(runId, row);
  const version = createHash('sha256').update(cells.value).digest('hex').slice(0, 16);
  return {
    version,
    html: html`<tr class="${row.outcome}" data-attack="${row.attack}" data-outcome="${row.outcome}" data-v="${version}">${cells}</tr>`,
  };
}

function attemptCells(runId: string, row: AttemptRow): SafeHtml {
  const link = attemptUrl(runId, row.attack, row.attempt, row.round);
  return html`
<td><a href="${link}">${row.attack}</a>${row.control ? html` <span class="pill">control</span>` : ''}</td>
<td class="num"><a href="${link}">${row.attempt}${row.round === undefined ? '' : html` <span class="pill">round ${row.round}</span>`}</a></td>
<td>${badge(attemptLabel({ outcome: row.outcome, control: row.control }))}</td>
<td>${row.surface}</td>
<td>${row.gapCodes.length === 0 ? html`<span class="muted">none</span>` : row.gapCodes.map((gap) => html`<code class="gap">${gap}</code> `)}</td>
<td>${when(row.finishedAt)}</td>
<td class="claim-cell">${row.reply === null ? html`<em>${row.failed ? 'error' : 'no reply'}</em>` : text(row.reply, { maxChars: 90 })}</td>
`;
}

function sortHeader(
  runId: string,
  query: AttemptQuery,
  column: { key: (typeof ATTEMPT_SORT_KEYS)[number]; label: string },
): SafeHtml {
  const active = query.sort === column.key;
  const order = active && query.order !== 'desc' ? 'desc' : 'asc';
  const { after: _after, ...rest } = query;
  const href = `${runUrl(runId)}${queryString({ ...rest, sort: column.key, order })}#attempts`;
  const arrow = active ? (query.order === 'desc' ? ' ▼' : ' ▲') : '';
  return html`<th><a href="${href}" class="sort${active ? ' active' : ''}">${column.label}${arrow}</a></th>`;
}

function filterForm(summary: RunSummary, query: AttemptQuery, groups: readonly LibraryGroup[]): SafeHtml {
  const any = { value: '', label: 'any' };
  const { run } = summary;
  const surfaces = ['workspace', 'home', 'network'];
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
  return html`<form class="filters" method="get" action="${runUrl(run.runId)}">
${select('outcome', 'Outcome', [any, ...ATTACK_OUTCOMES.map((value) => ({ value, label: value }))], query.outcome)}
${select('attack', 'Attack', [any, ...run.attacks.map((attack) => ({ value: attack.id, label: attack.id }))], query.attack)}
${select('surface', 'Surface', [any, ...surfaces.map((value) => ({ value, label: value }))], query.surface)}
${select('gap', 'Gap code', [any, { value: 'none', label: 'no gap' }, ...GAP_REASONS.map((value) => ({ value, label: value }))], query.gap)}
${axisSelects}<label>Reply holds <input type="search" name="q" value="${query.q ?? ''}" maxlength="200"></label>
${query.sort === undefined ? '' : html`<input type="hidden" name="sort" value="${query.sort}">`}
${query.order === undefined ? '' : html`<input type="hidden" name="order" value="${query.order}">`}
<button type="submit">Filter</button> <a href="${runUrl(run.runId)}">clear</a>
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
    'q',
    'sort',
    'order',
    'after',
  ] as const;
  const parts = keys.flatMap((key) => {
    const value = query[key];
    return value === undefined ? [] : [`${key}=${urlPart(value)}`];
  });
  return parts.length === 0 ? '' : `?${parts.join('&')}`;
}
