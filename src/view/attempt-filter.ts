import * as z from 'zod';
import { libraryRefOf } from '../attacks/library/library-groups.js';
import { CARRIER_IDS, OBJECTIVE_IDS, STRATEGY_IDS } from '../attacks/library/library-ids.js';
import { ATTACK_OUTCOMES, GAP_REASONS } from '../models/vocabulary.js';
import type { AttemptView } from './read-model.js';

/**
 * The filters and the order of a run's attempt table, read from the query string so that a filtered view
 * is a link one can share (`/runs/R?outcome=undetermined&gap=link_outside_root&sort=attack`). Every key is
 * optional; an empty value means "any". A value outside its vocabulary is refused with a message naming
 * the accepted values, never silently widened to "any". `objective`, `carrier` and `strategy` keep the
 * attempts of library attacks (`<objective>.<carrier>.<strategy>`) with that id on that axis.
 */

export const ATTEMPT_SORT_KEYS = ['attack', 'outcome', 'attempt', 'surface', 'gaps', 'finished'] as const;
export const SORT_ORDERS = ['asc', 'desc'] as const;

const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((value) => (value === '' ? undefined : value), schema.optional());

export const AttemptQuerySchema = z.object({
  outcome: optional(z.enum(ATTACK_OUTCOMES)),
  attack: optional(z.string().max(200)),
  surface: optional(z.string().max(40)),
  gap: optional(z.enum([...GAP_REASONS, 'none'])),
  objective: optional(z.enum(OBJECTIVE_IDS)),
  carrier: optional(z.enum(CARRIER_IDS)),
  strategy: optional(z.enum(STRATEGY_IDS)),
  sort: optional(z.enum(ATTEMPT_SORT_KEYS)),
  order: optional(z.enum(SORT_ORDERS)),
});
export type AttemptQuery = z.infer<typeof AttemptQuerySchema>;

export type ParsedQuery = { ok: true; query: AttemptQuery } | { ok: false; message: string };

export function parseAttemptQuery(params: Readonly<Record<string, string>>): ParsedQuery {
  const parsed = AttemptQuerySchema.safeParse(params);
  if (parsed.success) {
    // Only the keys that are set, so equal filters give equal queries (and equal links).
    const set = Object.entries(parsed.data).filter(([, value]) => value !== undefined);
    return { ok: true, query: Object.fromEntries(set) as AttemptQuery };
  }
  const issue = parsed.error.issues[0];
  const key = String(issue?.path[0] ?? 'query');
  return { ok: false, message: `the filter ${key} is not valid: ${issue?.message ?? 'unknown value'}` };
}

const OUTCOME_RANK: Record<string, number> = { success: 0, undetermined: 1, error: 2, failure: 3 };

export function filterAttempts(attempts: readonly AttemptView[], query: AttemptQuery): AttemptView[] {
  const library = (attempt: AttemptView) => libraryRefOf(attempt.record.attack);
  const kept = attempts.filter(
    (attempt) =>
      (query.outcome === undefined || attempt.record.outcome === query.outcome) &&
      (query.objective === undefined || library(attempt)?.objective === query.objective) &&
      (query.carrier === undefined || library(attempt)?.carrier === query.carrier) &&
      (query.strategy === undefined || library(attempt)?.strategy === query.strategy) &&
      (query.attack === undefined || attempt.record.attack === query.attack) &&
      (query.surface === undefined || attempt.surface === query.surface) &&
      (query.gap === undefined ||
        (query.gap === 'none'
          ? attempt.gapCodes.length === 0
          : attempt.gapCodes.some((gap) => gap === query.gap))),
  );
  if (query.sort === undefined) return kept;
  const direction = query.order === 'desc' ? -1 : 1;
  const compare = comparator(query.sort);
  // Stable: ties keep the run's own order (attack order of the campaign, then attempt number).
  return kept
    .map((attempt, index) => ({ attempt, index }))
    .sort((a, b) => direction * compare(a.attempt, b.attempt) || a.index - b.index)
    .map(({ attempt }) => attempt);
}

function comparator(key: (typeof ATTEMPT_SORT_KEYS)[number]): (a: AttemptView, b: AttemptView) => number {
  switch (key) {
    case 'attack':
      return (a, b) => byText(a.record.attack, b.record.attack);
    case 'outcome':
      return (a, b) => (OUTCOME_RANK[a.record.outcome] ?? 9) - (OUTCOME_RANK[b.record.outcome] ?? 9);
    case 'attempt':
      return (a, b) => a.record.attempt - b.record.attempt;
    case 'surface':
      return (a, b) => byText(a.surface, b.surface);
    case 'gaps':
      return (a, b) => a.gapCodes.length - b.gapCodes.length || byText(a.gapCodes.join(), b.gapCodes.join());
    case 'finished':
      return (a, b) => byText(a.record.finishedAt, b.record.finishedAt);
  }
}

function byText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
