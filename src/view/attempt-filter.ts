import * as z from 'zod';
import { libraryRefOf } from '../attacks/library/library-groups.js';
import { CARRIER_IDS, OBJECTIVE_IDS, STRATEGY_IDS } from '../attacks/library/library-ids.js';
import type { AttemptFilter, AttemptOrder } from '../memory/run-queries.js';
import type { CampaignRun } from '../models/campaign-run.js';
import { ATTACK_OUTCOMES, GAP_REASONS } from '../models/vocabulary.js';

/**
 * The filters and the order of a run's attempt table, read from the query string so that a filtered view
 * is a link one can share (`/runs/R?outcome=undetermined&gap=link_outside_root&sort=attack`); the memory
filters, orders and pages (a hundred attempts at a time, `after` naming where the page starts). Every key is
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
  /** Text the reply holds (ASCII letters compared without case). */
  q: optional(z.string().max(200)),
  sort: optional(z.enum(ATTEMPT_SORT_KEYS)),
  order: optional(z.enum(SORT_ORDERS)),
  /** Where the page starts: the `next` cursor of the page before (opaque, checked by the memory). */
  after: optional(z.string().max(2_000)),
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

/**
 * The memory's filter for a query (src/memory/run-queries.ts): the attack, objective, carrier and strategy
 * choose the run's attacks they name; outcome, surface, gap and reply text are passed on.
 */
export function filterOf(run: CampaignRun, query: AttemptQuery): AttemptFilter {
  const library =
    query.objective !== undefined || query.carrier !== undefined || query.strategy !== undefined;
  const attacks =
    query.attack === undefined && !library
      ? undefined
      : run.attacks
          .map((attack) => attack.id)
          .filter((id) => {
            const ref = libraryRefOf(id);
            return (
              (query.attack === undefined || id === query.attack) &&
              (query.objective === undefined || ref?.objective === query.objective) &&
              (query.carrier === undefined || ref?.carrier === query.carrier) &&
              (query.strategy === undefined || ref?.strategy === query.strategy)
            );
          });
  return {
    // An attack the run does not list can still be asked for by name (its attempts are shown).
    ...(attacks === undefined
      ? {}
      : {
          attacks: query.attack !== undefined && !library && attacks.length === 0 ? [query.attack] : attacks,
        }),
    ...(query.outcome === undefined ? {} : { outcome: query.outcome }),
    ...(query.surface === undefined ? {} : { surface: query.surface }),
    ...(query.gap === undefined ? {} : { gap: query.gap }),
    ...(query.q === undefined ? {} : { replyText: query.q }),
  };
}

/** The memory's order for a query's sort key: the run's own order unless one is chosen. */
export function orderOf(query: AttemptQuery): AttemptOrder {
  return query.sort ?? 'run';
}
