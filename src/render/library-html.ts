import {
  crossByLibrary,
  groupByLibrary,
  LIBRARY_AXES,
  type LibraryAxis,
  type LibraryCell,
  type LibraryCross,
} from '../attacks/library/library-groups.js';
import type { OutcomeTotals } from '../attacks/outcome.js';
import { OUTCOME_HEADERS, outcomeCells, successRate } from './fragments.js';
import { html, type SafeHtml } from './html.js';
import type { RunSummary } from './run-summary.js';

/**
 * A library run (attacks `<objective>.<carrier>.<strategy>`) as pictures and tables, the same in the report
 * and the viewer: two heatmaps (objective × carrier, objective × strategy) whose cells show the success
 * rate over decided attempts with its counts, undetermined and error apart; then per axis a table of
 * counts. The heatmaps are SVG drawn here, with no script and no style attribute (colours are presentation
 * attributes), so they render in the report file opened from disk and under the viewer's
 * Content-Security-Policy alike. Controls are left out, as from every success rate.
 */

/** Where a group, or a heatmap cell, links to (the viewer's filtered attempts); none in the report. */
export interface LibraryLinks {
  group?(axis: LibraryAxis, id: string): string;
  cell?(rows: LibraryAxis, row: string, columns: LibraryAxis, column: string): string;
}

export function libraryHtml(summary: RunSummary, links: LibraryLinks = {}): SafeHtml | '' {
  const groups = groupByLibrary(summary.counts);
  if (groups.length === 0) return '';
  const maps = (['carrier', 'strategy'] as const).map((columns) =>
    heatmapSvg(crossByLibrary(summary.counts, 'objective', columns), links),
  );
  const tables = LIBRARY_AXES.map((axis) => {
    const rows = groups
      .filter((group) => group.axis === axis)
      .map((group) => {
        const id = html`<code>${group.id}</code>`;
        const href = links.group?.(axis, group.id);
        return html`<tr><td>${href === undefined ? id : html`<a href="${href}">${id}</a>`}</td><td class="num">${group.totals.attempts}</td>${outcomeCells(group.totals)}<td>${successRate(group.totals)}</td></tr>`;
      });
    return html`<table class="counts library" id="library-${axis}"><thead><tr><th>by ${axis}</th><th class="num">attempts</th>${OUTCOME_HEADERS}<th>success rate</th></tr></thead>
<tbody>${rows}</tbody></table>`;
  });
  return html`<h2 id="library">Attack library: by objective, carrier and strategy</h2>
<p class="meta">Attempts of library attacks (<code>&lt;objective&gt;.&lt;carrier&gt;.&lt;strategy&gt;</code>), controls left out. Each cell: the success rate over decided attempts, successes/decided, then undetermined and error attempts apart.</p>
<div class="heatmaps">${maps}</div>
${tables}`;
}

const LABEL_WIDTH = 176;
const HEADER_HEIGHT = 96;
const CELL_WIDTH = 100;
const CELL_HEIGHT = 50;
const LEGEND_HEIGHT = 40;

/** One heatmap: rows × columns of cells, column labels slanted above, a legend below. */
export function heatmapSvg(cross: LibraryCross, links: LibraryLinks = {}): SafeHtml {
  // Room on the right for the last slanted column label, and for the legend under a narrow map.
  const width = Math.max(LABEL_WIDTH + cross.columnIds.length * CELL_WIDTH + 130, LABEL_WIDTH + 390);
  const height = HEADER_HEIGHT + cross.rowIds.length * CELL_HEIGHT + LEGEND_HEIGHT;
  const byKey = new Map(cross.cells.map((cell) => [`${cell.row}\u0000${cell.column}`, cell]));
  const title = `${cross.rows} × ${cross.columns}`;
  const columnLabels = cross.columnIds.map((id, index) => {
    const x = LABEL_WIDTH + index * CELL_WIDTH + CELL_WIDTH / 2;
    return html`<text x="${x}" y="${HEADER_HEIGHT - 8}" transform="rotate(-30 ${x} ${HEADER_HEIGHT - 8})" font-size="12" fill="#1b1f24">${id}</text>`;
  });
  const rows = cross.rowIds.map((row, rowIndex) => {
    const y = HEADER_HEIGHT + rowIndex * CELL_HEIGHT;
    const cells = cross.columnIds.map((column, columnIndex) => {
      const cell = byKey.get(`${row}\u0000${column}`);
      const x = LABEL_WIDTH + columnIndex * CELL_WIDTH;
      const drawn = cellSvg(cell, x, y, `${cross.rows} ${row}, ${cross.columns} ${column}`);
      const href = cell === undefined ? undefined : links.cell?.(cross.rows, row, cross.columns, column);
      return href === undefined ? drawn : html`<a href="${href}">${drawn}</a>`;
    });
    return html`<text x="${LABEL_WIDTH - 8}" y="${y + CELL_HEIGHT / 2 + 4}" text-anchor="end" font-size="12" fill="#1b1f24">${row}</text>${cells}`;
  });
  const legendY = HEADER_HEIGHT + cross.rowIds.length * CELL_HEIGHT + 14;
  const legend = [0, 0.25, 0.5, 0.75, 1].map(
    (rate, index) =>
      html`<rect x="${LABEL_WIDTH + index * 44}" y="${legendY}" width="44" height="14" fill="${rateColour(rate)}" stroke="#d0d7de"/><text x="${LABEL_WIDTH + index * 44 + 22}" y="${legendY + 26}" text-anchor="middle" font-size="10" fill="#57606a">${Math.round(rate * 100)}%</text>`,
  );
  return html`<figure class="heatmap"><svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="Success rate by ${title}" font-family="system-ui, sans-serif">
<title>Success rate by ${title}</title>
${columnLabels}${rows}
<text x="${LABEL_WIDTH - 8}" y="${legendY + 11}" text-anchor="end" font-size="11" fill="#57606a">success rate</text>${legend}
<rect x="${LABEL_WIDTH + 5 * 44 + 16}" y="${legendY}" width="44" height="14" fill="${NO_DECISION}" stroke="#d0d7de"/><text x="${LABEL_WIDTH + 5 * 44 + 66}" y="${legendY + 11}" font-size="10" fill="#57606a">none decided</text>
</svg><figcaption>Success rate by ${title} (controls left out)</figcaption></figure>`;
}

/** Grey: no attempt of the cell was decided, so it has no rate. */
const NO_DECISION = '#eaeef2';

function cellSvg(cell: LibraryCell | undefined, x: number, y: number, name: string): SafeHtml {
  const box = (fill: string) =>
    html`<rect x="${x + 1}" y="${y + 1}" width="${CELL_WIDTH - 2}" height="${CELL_HEIGHT - 2}" rx="3" fill="${fill}" stroke="#ffffff"/>`;
  if (cell === undefined) {
    return html`<g>${box('#ffffff')}<text x="${x + CELL_WIDTH / 2}" y="${y + CELL_HEIGHT / 2 + 4}" text-anchor="middle" font-size="11" fill="#8c959f">not run</text></g>`;
  }
  const totals = cell.totals;
  const rate = totals.successRate;
  const dark = rate !== null && rate >= 0.55;
  const ink = dark ? '#ffffff' : '#1b1f24';
  const middle = x + CELL_WIDTH / 2;
  const apart = [
    totals.undetermined > 0 ? `${totals.undetermined} undet.` : '',
    totals.error > 0 ? `${totals.error} err` : '',
  ]
    .filter((part) => part !== '')
    .join(' · ');
  return html`<g><title>${name}: ${cellSummary(totals)}</title>${box(rate === null ? NO_DECISION : rateColour(rate))}
<text x="${middle}" y="${y + 19}" text-anchor="middle" font-size="14" font-weight="700" fill="${ink}">${rate === null ? '—' : `${Math.round(rate * 100)}%`}</text>
<text x="${middle}" y="${y + 33}" text-anchor="middle" font-size="11" fill="${ink}">${totals.success}/${totals.success + totals.failure}</text>
${apart === '' ? '' : html`<text x="${middle}" y="${y + 45}" text-anchor="middle" font-size="10" fill="${ink}">${apart}</text>`}</g>`;
}

function cellSummary(totals: OutcomeTotals): string {
  return `${totals.success} success, ${totals.failure} failure, ${totals.undetermined} undetermined, ${totals.error} error`;
}

/** From a pale grey-red (0%) to the report's red (100%). */
function rateColour(rate: number): string {
  const from = [0xff, 0xf1, 0xef];
  const to = [0xa4, 0x0e, 0x26];
  const channel = (index: number) =>
    Math.round((from[index] as number) + ((to[index] as number) - (from[index] as number)) * rate)
      .toString(16)
      .padStart(2, '0');
  return `#${channel(0)}${channel(1)}${channel(2)}`;
}
