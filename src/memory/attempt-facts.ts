import type { Transaction } from 'kysely';
import { type AttackResult, AttackResultSchema } from '../models/attack-result.js';
import { type CampaignRun, CampaignRunSchema } from '../models/campaign-run.js';
import { conditionSurface } from '../models/condition.js';
import type { AttackOutcome } from '../models/vocabulary.js';
import type { Tables } from './tables.js';

/**
 * What the viewer and the report count and page by (internal): one narrow row per stored attempt
 * (`attempt_facts`: the attack's place in its run, whether it is a control, the surface it is judged on,
 * chain and round, the outcomes, when it finished, its containment, how many gap codes its evidence has),
 * its gap codes (`attempt_gaps`) and each run's attacks in order (`run_attacks`). Written in the same
 * transaction as the run or the attack result they describe (so `witness run`, imports and queued runs all
 * write them), never changed after; the migration that created them filled them for what was stored
 * before. The records stay the source of truth: a fact is derived from them and never read back into one.
 *
 * Guarantees: an attempt's facts exist exactly when its result names a stored run; its gap rows are the
 * distinct gap codes of the observations its score rests on (what `gapCodesOf` finds in the record).
 */

/** The order outcomes sort in: what needs reading first. */
export const OUTCOME_RANKS: Readonly<Record<AttackOutcome, number>> = {
  success: 0,
  undetermined: 1,
  error: 2,
  failure: 3,
};

/** The position of an attempt whose attack the run does not list (after every listed attack). */
export const UNLISTED_POSITION = 2_147_483_647;

/** Rows per insert statement (well under both backends' bound on parameters). */
const INSERT_ROWS = 200;

/** Records the run's attacks in order (what an attempt's position, control and surface are read from). */
export async function storeRunAttacks(trx: Transaction<Tables>, run: CampaignRun): Promise<void> {
  const rows = run.attacks.map((attack, position) => ({
    run_id: run.runId,
    position,
    attack: attack.id,
    control: attack.control === true ? 1 : 0,
    surface: surfaceOf(attack.expectation.conditions[0]),
  }));
  for (let start = 0; start < rows.length; start += INSERT_ROWS) {
    await trx
      .insertInto('run_attacks')
      .values(rows.slice(start, start + INSERT_ROWS))
      .onConflict((oc) => oc.columns(['run_id', 'position']).doNothing())
      .execute();
  }
}

/** The facts of one attack result just stored; nothing for a result without a run. */
export async function storeAttemptFacts(trx: Transaction<Tables>, result: AttackResult): Promise<void> {
  if (result.runId === undefined) return;
  const attack = await trx
    .selectFrom('run_attacks')
    .select(['position', 'control', 'surface'])
    .where('run_id', '=', result.runId)
    .where('attack', '=', result.attack)
    .orderBy('position')
    .executeTakeFirst();
  const gaps = result.scoreId === null ? [] : await gapCodesOfScore(trx, result.scoreId);
  await trx
    .insertInto('attempt_facts')
    .values({
      result_id: result.id,
      run_id: result.runId,
      position: attack?.position ?? UNLISTED_POSITION,
      attack: result.attack,
      attempt: result.attempt,
      chain: result.chain ?? null,
      round: result.round ?? 0,
      outcome: result.outcome,
      outcome_rank: OUTCOME_RANKS[result.outcome],
      control: Number(attack?.control ?? 0),
      surface: attack?.surface ?? 'workspace',
      task_outcome: result.task?.outcome ?? null,
      finished_at: result.createdAt,
      containment: result.containment ?? null,
      gap_count: gaps.length,
    })
    .onConflict((oc) => oc.column('result_id').doNothing())
    .execute();
  if (gaps.length > 0) {
    await trx
      .insertInto('attempt_gaps')
      .values(gaps.map((reason) => ({ result_id: result.id, run_id: result.runId as string, reason })))
      .onConflict((oc) => oc.columns(['result_id', 'reason']).doNothing())
      .execute();
  }
}

/** Distinct gap codes of the observations a score rests on, sorted. */
async function gapCodesOfScore(trx: Transaction<Tables>, scoreId: string): Promise<string[]> {
  const rows = await trx
    .selectFrom('score_observations')
    .innerJoin('observations', 'observations.id', 'score_observations.observation_id')
    .select('observations.record_json')
    .where('score_observations.score_id', '=', scoreId)
    .execute();
  const codes = new Set<string>();
  for (const row of rows) {
    const observation = JSON.parse(row.record_json) as {
      payload?: { coverage?: { gaps?: Array<{ reason?: unknown }> } };
    };
    for (const gap of observation.payload?.coverage?.gaps ?? []) {
      if (typeof gap.reason === 'string') codes.add(gap.reason);
    }
  }
  return [...codes].sort();
}

/** The surface a condition is judged on (`network` for a request condition). */
function surfaceOf(
  condition: CampaignRun['attacks'][number]['expectation']['conditions'][number] | undefined,
) {
  return condition === undefined ? 'workspace' : conditionSurface(condition);
}

/** Rows per read while the migration fills the facts of what was stored before. */
const BACKFILL_PAGE_ROWS = 500;

/** The migration's data step: the facts of every run and attack result stored before they existed. */
export async function backfillAttemptFacts(trx: Transaction<Tables>): Promise<void> {
  let lastRun: string | undefined;
  for (;;) {
    let query = trx.selectFrom('runs').select(['id', 'record_json']).orderBy('id').limit(50);
    if (lastRun !== undefined) query = query.where('id', '>', lastRun);
    const runs = await query.execute();
    for (const row of runs) {
      const run = CampaignRunSchema.safeParse(JSON.parse(row.record_json));
      if (run.success) await storeRunAttacks(trx, run.data);
    }
    if (runs.length < 50) break;
    lastRun = (runs[runs.length - 1] as { id: string }).id;
  }
  let lastResult: string | undefined;
  for (;;) {
    let query = trx
      .selectFrom('attack_results')
      .select(['id', 'record_json'])
      .where('run_id', 'is not', null)
      .orderBy('id')
      .limit(BACKFILL_PAGE_ROWS);
    if (lastResult !== undefined) query = query.where('id', '>', lastResult);
    const results = await query.execute();
    for (const row of results) {
      const result = AttackResultSchema.safeParse(JSON.parse(row.record_json));
      if (result.success) await storeAttemptFacts(trx, result.data);
    }
    if (results.length < BACKFILL_PAGE_ROWS) break;
    lastResult = (results[results.length - 1] as { id: string }).id;
  }
}
