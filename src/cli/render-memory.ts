import { NotFoundError } from '../errors.js';
import type { Memory } from '../memory/memory.js';
import type { Scorable } from '../models/scorable.js';
import type { Score } from '../models/score.js';
import { excerpt } from './render.js';

/** Terminal renderings of what the memory holds. `--json` output never goes through here. */

export function verdictWord(score: Pick<Score, 'status' | 'value'>): string {
  if (score.status === 'undetermined') return 'UNDETERMINED';
  return score.value ? 'TRUE' : 'FALSE';
}

/**
 * What a score is about, in a few words (attacker-controlled text is escaped and cut short). A message is
 * named by the campaign, attack and attempt of its conversation when `origin` knows them.
 */
export function describeScorable(scorable: Scorable, origin?: AttemptOrigin): string {
  switch (scorable.scorableType) {
    case 'surface':
      return `${excerpt(scorable.uri, 60)} (${scorable.match})`;
    case 'message': {
      if (origin !== undefined) {
        return `campaign ${excerpt(origin.campaign, 40)} / attack ${excerpt(origin.attack, 40)} / attempt ${excerpt(origin.attempt, 10)}`;
      }
      const more = scorable.pieceIds.length > 1 ? ` +${scorable.pieceIds.length - 1}` : '';
      return `message ${excerpt(scorable.pieceIds[0] ?? '', 40)}${more}`;
    }
    case 'content':
      return `content "${excerpt(scorable.text, 30)}"`;
  }
}

/** The campaign attempt a message belongs to (its conversation's labels). */
export interface AttemptOrigin {
  campaign: string;
  attack: string;
  attempt: string;
}

/** One row per score, oldest first, with aligned columns. */
export function renderScoreTable(
  scores: readonly Score[],
  origins: ReadonlyMap<string, AttemptOrigin> = new Map(),
): string {
  const header = ['SCORE', 'CREATED', 'VERDICT', 'ABOUT', 'OBSERVATIONS'];
  const rows = scores.map((score) => [
    excerpt(score.id, 80),
    excerpt(score.createdAt, 40),
    verdictWord(score),
    describeScorable(score.scorable, origins.get(score.id)),
    score.observationIds.length === 0 ? '-' : score.observationIds.map((id) => excerpt(id, 80)).join(', '),
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

/** The attempt each message score belongs to, read from its conversation's labels (absent when unlabelled). */
export async function attemptOrigins(
  memory: Pick<Memory, 'getMessagePiece' | 'getConversation'>,
  scores: readonly Score[],
): Promise<Map<string, AttemptOrigin>> {
  const origins = new Map<string, AttemptOrigin>();
  const byConversation = new Map<string, AttemptOrigin | undefined>();
  for (const score of scores) {
    if (score.scorable.scorableType !== 'message') continue;
    const pieceId = score.scorable.pieceIds[0];
    if (pieceId === undefined) continue;
    try {
      const piece = await memory.getMessagePiece(pieceId);
      if (!byConversation.has(piece.conversationId)) {
        const { labels } = await memory.getConversation(piece.conversationId);
        const { campaign, attack, attempt } = labels;
        byConversation.set(
          piece.conversationId,
          campaign !== undefined && attack !== undefined && attempt !== undefined
            ? { campaign, attack, attempt }
            : undefined,
        );
      }
      const origin = byConversation.get(piece.conversationId);
      if (origin !== undefined) origins.set(score.id, origin);
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
    }
  }
  return origins;
}
