import { type AttemptFilter, emptyRunCounts, type RunQueries } from '../memory/run-queries.js';
import type { AttemptRecord } from '../models/attempt-record.js';
import type { CampaignRun } from '../models/campaign-run.js';
import {
  CARD_KIND_TEXT,
  CARD_KINDS,
  type CardKind,
  cardKindOf,
  compactAttemptOf,
  DEFAULT_REPORT_BOUNDS,
  type ReportBounds,
  type ReportRun,
  roundKey,
} from './report-run.js';
import { summarizeRun } from './run-summary.js';

/**
 * The {@link ReportRun} of a stored run, read the way the viewer reads one: the summary from counts the
 * database computes, then only the attempts the report shows — per kind that needs reading the first
 * `cardsPerOutcome` in the run's order, and the first `compact` attempts decided false — so the report's
 * memory and time grow with its bounds, not with the run. It equals what {@link ReportCollector} chooses
 * from the same records given in the run's order (test/render/stored-report-run.test.ts).
 */

/** Which attempts each kind of card shows. */
const CARD_FILTERS: Readonly<Record<CardKind, AttemptFilter>> = {
  success: { outcome: 'success', control: false },
  control_tripped: { outcome: 'success', control: true },
  undetermined: { outcome: 'undetermined' },
  error: { outcome: 'error' },
};

export async function storedReportRun(
  queries: RunQueries,
  run: CampaignRun,
  bounds: ReportBounds = DEFAULT_REPORT_BOUNDS,
): Promise<ReportRun & { attempts: number }> {
  const counts = (await queries.runCounts([run.runId])).get(run.runId) ?? emptyRunCounts();
  const controls = new Set(
    run.attacks.filter((attack) => attack.control === true).map((attack) => attack.id),
  );
  // Every stored attempt (each round of a chain) by the kind of card it gets (null: a compact row).
  const seen = new Map<CardKind | null, number>();
  let attempts = 0;
  for (const entry of counts.perAttackOutcome) {
    const kind = cardKindOf({ outcome: entry.outcome, control: controls.has(entry.attack) });
    seen.set(kind, (seen.get(kind) ?? 0) + entry.count);
    attempts += entry.count;
  }
  const position = new Map(run.attacks.map((attack, index) => [attack.id, index] as const));
  const order = (record: AttemptRecord) => [
    position.get(record.attack) ?? Number.MAX_SAFE_INTEGER,
    record.attempt,
    record.round ?? 0,
  ];
  const cards: AttemptRecord[] = [];
  const shown = new Map<CardKind, number>();
  for (const kind of CARD_KINDS) {
    const wanted = (seen.get(kind) ?? 0) === 0 ? 0 : bounds.cardsPerOutcome;
    const records = wanted === 0 ? [] : await queries.firstAttempts(run.runId, CARD_FILTERS[kind], wanted);
    shown.set(kind, records.length);
    cards.push(...records);
  }
  cards.sort((a, b) => compareKeys(order(a), order(b)));
  const injectionsBefore = new Map<string, string>();
  for (const record of cards) {
    if (record.chain === undefined || (record.round ?? 1) <= 1) continue;
    const before = await queries.getAttempt(run.runId, {
      attack: record.attack,
      attempt: record.attempt,
      round: (record.round ?? 1) - 1,
    });
    if (before?.adaptation !== undefined) injectionsBefore.set(roundKey(record), before.adaptation.injection);
  }
  const failed = seen.get(null) ?? 0;
  const compact =
    failed === 0 || bounds.compact <= 0
      ? []
      : await queries.firstAttempts(run.runId, { outcome: 'failure' }, bounds.compact);
  return {
    summary: summarizeRun(run, counts),
    cards,
    injectionsBefore,
    cardsOmitted: CARD_KINDS.map((kind) => ({
      kind,
      ...CARD_KIND_TEXT[kind],
      count: (seen.get(kind) ?? 0) - (shown.get(kind) ?? 0),
    })),
    compact: compact.map((record) => compactAttemptOf(record, controls.has(record.attack))),
    compactOmitted: failed - compact.length,
    bounds,
    attempts,
  };
}

function compareKeys(a: readonly number[], b: readonly number[]): number {
  for (let index = 0; index < a.length; index++) {
    const difference = (a[index] as number) - (b[index] as number);
    if (difference !== 0) return difference;
  }
  return 0;
}
