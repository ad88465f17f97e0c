import type { Scorable } from '../models/scorable.js';
import type { Score } from '../models/score.js';
import { excerpt } from './render.js';

/** Terminal renderings of what the memory holds. `--json` output never goes through here. */

export function verdictWord(score: Pick<Score, 'status' | 'value'>): string {
  if (score.status === 'undetermined') return 'UNDETERMINED';
  return score.value ? 'TRUE' : 'FALSE';
}

/** What a score is about, in a few words (attacker-controlled text is escaped and cut short). */
export function describeScorable(scorable: Scorable): string {
  switch (scorable.scorableType) {
    case 'surface':
      return `${excerpt(scorable.uri, 60)} (${scorable.match})`;
    case 'message': {
      const more = scorable.pieceIds.length > 1 ? ` +${scorable.pieceIds.length - 1}` : '';
      return `message ${excerpt(scorable.pieceIds[0] ?? '', 40)}${more}`;
    }
    case 'content':
      return `content "${excerpt(scorable.text, 30)}"`;
  }
}

/** One row per score, oldest first, with aligned columns. */
export function renderScoreTable(scores: readonly Score[]): string {
  const header = ['SCORE', 'CREATED', 'VERDICT', 'ABOUT', 'OBSERVATIONS'];
  const rows = scores.map((score) => [
    score.id,
    score.createdAt,
    verdictWord(score),
    describeScorable(score.scorable),
    score.observationIds.length === 0 ? '-' : score.observationIds.join(', '),
  ]);
  return renderTable(header, rows);
}

export function renderTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join('  ');
  return [line(header), ...rows.map(line)].join('\n');
}
