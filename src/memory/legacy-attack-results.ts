import type { Transaction } from 'kysely';
import type { AttackResult } from '../models/attack-result.js';
import { AttackResultSchema } from '../models/attack-result.js';
import { type CampaignRun, CampaignRunSchema } from '../models/campaign-run.js';
import type { JsonObject } from '../models/record.js';
import { TimestampSchema } from '../models/record.js';
import { TranscriptEventSchema } from '../models/transcript.js';
import type { Tables } from './tables.js';

/**
 * Attack results written before runs had their own table (memory schema 1, and exports made then) carried
 * the run, the prompt, the expectation, the transcript and the times inside `metadata`. This turns such a
 * result into the current form: the run as its own record, the result naming it by `runId`, with typed
 * `startedAt` and `transcript`, and those keys gone from `metadata`. A result whose metadata does not
 * hold a valid run, transcript and times is left exactly as it is (it was not written by a campaign run).
 * Used by the schema-2 migration and by import, so old files and old exports read the same way.
 */
export function upgradeLegacyAttackResult(result: AttackResult): {
  result: AttackResult;
  run: CampaignRun | null;
} {
  const unchanged = { result, run: null };
  if (result.runId !== undefined) return unchanged;
  const {
    runId,
    run,
    prompt: _prompt,
    expectation: _expectation,
    transcript,
    startedAt,
    finishedAt: _finishedAt,
    ...rest
  } = result.metadata;
  const parsedRun = CampaignRunSchema.safeParse(run);
  const parsedTranscript = TranscriptEventSchema.array().safeParse(transcript ?? []);
  const parsedStart = TimestampSchema.safeParse(startedAt);
  if (typeof runId !== 'string' || !parsedRun.success || parsedRun.data.runId !== runId) return unchanged;
  if (!parsedTranscript.success || !parsedStart.success) return unchanged;
  const upgraded = AttackResultSchema.safeParse({
    ...result,
    runId,
    startedAt: parsedStart.data,
    transcript: parsedTranscript.data,
    metadata: rest as JsonObject,
  });
  if (!upgraded.success) return unchanged;
  return { result: upgraded.data, run: parsedRun.data };
}

/** The schema-2 data step: moves every legacy result's run into `runs` and rewrites the result. */
export async function upgradeStoredAttackResults(trx: Transaction<Tables>): Promise<void> {
  const rows = await trx.selectFrom('attack_results').select(['id', 'record_json']).orderBy('id').execute();
  for (const row of rows) {
    const parsed = AttackResultSchema.safeParse(JSON.parse(row.record_json));
    if (!parsed.success) continue;
    const { result, run } = upgradeLegacyAttackResult(parsed.data);
    if (run === null) continue;
    await trx
      .insertInto('runs')
      .values({
        id: run.runId,
        campaign: run.campaign,
        started_at: run.startedAt,
        record_json: JSON.stringify(run),
      })
      .onConflict((oc) => oc.column('id').doNothing())
      .execute();
    await trx
      .updateTable('attack_results')
      .set({ run_id: run.runId, record_json: JSON.stringify(result) })
      .where('id', '=', row.id)
      .execute();
  }
}
