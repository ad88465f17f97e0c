import { NotFoundError } from '../errors.js';
import { type AttackResult, AttackResultSchema } from '../models/attack-result.js';
import { type AttemptRecord, AttemptRecordSchema } from '../models/attempt-record.js';
import { type CampaignRun, CampaignRunSchema } from '../models/campaign-run.js';
import { parseRecord } from '../models/record.js';
import type { AttackResultFilter, RunFilter } from './memory.js';
import type { SqlContext } from './sql-context.js';
import type { SqlEvidence } from './sql-evidence.js';
import { parseStored, parseStoredRows, storeAttackResult, storeRun } from './store-records.js';

/**
 * The runs aggregate (internal): campaign runs and the attack results of their attempts. An attempt is
 * not stored twice: {@link SqlRuns.listAttempts} joins a run with its results, their scores and the
 * observations the scores rest on.
 */
export class SqlRuns {
  readonly #sql: SqlContext;
  readonly #evidence: SqlEvidence;

  constructor(sql: SqlContext, evidence: SqlEvidence) {
    this.#sql = sql;
    this.#evidence = evidence;
  }

  async saveRun(run: CampaignRun): Promise<void> {
    const record = parseRecord(CampaignRunSchema, run, 'campaign run');
    await this.#sql.write((trx) => storeRun(trx, record));
  }

  async getRun(runId: string): Promise<CampaignRun> {
    const row = await this.#sql.read((db) =>
      db.selectFrom('runs').select('record_json').where('id', '=', runId).executeTakeFirst(),
    );
    if (row === undefined) throw new NotFoundError(`campaign run ${JSON.stringify(runId)} is not stored`);
    return parseStored(CampaignRunSchema, row.record_json, `campaign run ${runId}`);
  }

  async listRuns(filter: RunFilter = {}): Promise<CampaignRun[]> {
    const rows = await this.#sql.read((db) => {
      let query = db.selectFrom('runs').select('record_json');
      if (filter.campaign !== undefined) query = query.where('campaign', '=', filter.campaign);
      return query.orderBy('started_at').orderBy('id').execute();
    });
    return rows.map((row) => parseStored(CampaignRunSchema, row.record_json, 'campaign run'));
  }

  async listAttempts(runId: string): Promise<AttemptRecord[]> {
    const run = await this.getRun(runId);
    const results = await this.#sql.read(async (db) =>
      parseStoredRows(
        db,
        AttackResultSchema,
        await db
          .selectFrom('attack_results')
          .select(['record_json', 'parts'])
          .where('run_id', '=', runId)
          .execute(),
        'attack result',
      ),
    );
    const order = run.attacks.map((attack) => attack.id);
    results.sort(
      (a, b) =>
        order.indexOf(a.attack) - order.indexOf(b.attack) ||
        a.attempt - b.attempt ||
        (a.round ?? 0) - (b.round ?? 0) ||
        (a.id < b.id ? -1 : 1),
    );
    const attempts: AttemptRecord[] = [];
    for (const result of results) attempts.push(await this.attemptOf(run, result));
    return attempts;
  }

  /** One attempt: the result joined with its run's attack, its score and that score's observations. */
  async attemptOf(run: CampaignRun, result: AttackResult): Promise<AttemptRecord> {
    const attack = run.attacks.find((candidate) => candidate.id === result.attack);
    const score = result.scoreId === null ? null : await this.#evidence.getScore(result.scoreId);
    const observations =
      result.scoreId === null ? [] : await this.#evidence.observationsForScore(result.scoreId);
    return parseRecord(
      AttemptRecordSchema,
      {
        schemaVersion: 1,
        runId: run.runId,
        campaign: result.campaign,
        attack: result.attack,
        attempt: result.attempt,
        prompt: attack?.prompt,
        expectation: attack?.expectation,
        target: result.target ?? run.target,
        outcome: result.outcome,
        reply: result.reply,
        error: result.error,
        ...(result.targetError === undefined ? {} : { targetError: result.targetError }),
        transcript: result.transcript ?? [],
        score,
        observations,
        workspace: result.workspace,
        conversationId: result.conversationId,
        ...(result.containment === undefined ? {} : { containment: result.containment }),
        ...(result.shownPaths === undefined ? {} : { shownPaths: result.shownPaths }),
        ...(result.cleanup === undefined ? {} : { cleanup: result.cleanup }),
        control: attack?.control === true,
        ...(result.changes === undefined ? {} : { changes: result.changes }),
        ...(result.chain === undefined ? {} : { chain: result.chain, round: result.round }),
        ...(result.adaptation === undefined ? {} : { adaptation: result.adaptation }),
        ...(result.task === undefined || attack?.task === undefined
          ? {}
          : { task: { ...result.task, expectation: attack.task } }),
        ...(result.network === undefined ? {} : { network: result.network }),
        startedAt: result.startedAt ?? result.createdAt,
        finishedAt: result.createdAt,
      },
      `attempt of stored attack result ${result.id} (run ${run.runId})`,
    );
  }

  async saveAttackResult(result: AttackResult): Promise<void> {
    const record = parseRecord(AttackResultSchema, result, 'attack result');
    await this.#sql.write((trx) => storeAttackResult(trx, record));
  }

  async getAttackResult(id: string): Promise<AttackResult> {
    const [result] = await this.#sql.read(async (db) =>
      parseStoredRows(
        db,
        AttackResultSchema,
        await db.selectFrom('attack_results').select(['record_json', 'parts']).where('id', '=', id).execute(),
        `attack result ${id}`,
      ),
    );
    if (result === undefined) throw new NotFoundError(`attack result ${JSON.stringify(id)} is not stored`);
    return result;
  }

  async listAttackResults(filter: AttackResultFilter = {}): Promise<AttackResult[]> {
    return this.#sql.read(async (db) => {
      let query = db.selectFrom('attack_results').select(['record_json', 'parts']);
      if (filter.campaign !== undefined) query = query.where('campaign', '=', filter.campaign);
      if (filter.attack !== undefined) query = query.where('attack', '=', filter.attack);
      if (filter.outcome !== undefined) query = query.where('outcome', '=', filter.outcome);
      return parseStoredRows(
        db,
        AttackResultSchema,
        await query.orderBy('created_at').orderBy('id').execute(),
        'attack result',
      );
    });
  }
}
