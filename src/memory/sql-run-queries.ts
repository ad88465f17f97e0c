import { type RawBuilder, sql } from 'kysely';
import { InvalidOptionError, NotFoundError } from '../errors.js';
import { AttackResultSchema } from '../models/attack-result.js';
import type { AttemptRecord } from '../models/attempt-record.js';
import type { CampaignRun } from '../models/campaign-run.js';
import { ATTACK_OUTCOMES, type AttackOutcome, type TaskOutcome } from '../models/vocabulary.js';
import { OUTCOME_RANKS } from './attempt-facts.js';
import {
  type AttemptFilter,
  type AttemptKey,
  type AttemptOrder,
  type AttemptPage,
  type AttemptPageRequest,
  type AttemptRow,
  emptyRunCounts,
  type PairedAttempts,
  REPLY_EXCERPT_CHARS,
  type RunCounts,
  type RunQueries,
} from './run-queries.js';
import type { SqlContext } from './sql-context.js';
import type { SqlRuns } from './sql-runs.js';
import { parseStoredRows } from './store-records.js';

/**
 * {@link RunQueries} in SQL over the attempt facts (internal), the same statements on SQLite and
 * PostgreSQL. Counts are aggregate queries (an adaptive chain's deciding round — its first success, else
 * its last round — is found by a grouped subquery); pages are keyset reads over one index per order;
 * full records are read only for the attempts asked for.
 */

/** The columns of each order, most significant first; the last ones make every key unique. */
const ORDER_COLUMNS: Readonly<Record<AttemptOrder, readonly string[]>> = {
  run: ['position', 'attempt', 'round', 'result_id'],
  attack: ['attack', 'attempt', 'round', 'result_id'],
  outcome: ['outcome_rank', 'position', 'attempt', 'round', 'result_id'],
  attempt: ['attempt', 'position', 'round', 'result_id'],
  surface: ['surface', 'position', 'attempt', 'round', 'result_id'],
  gaps: ['gap_count', 'position', 'attempt', 'round', 'result_id'],
  finished: ['finished_at', 'result_id'],
};

/** Which sort columns hold numbers (the others hold text). */
const NUMERIC_COLUMNS = new Set(['position', 'attempt', 'round', 'outcome_rank', 'gap_count']);

/** Most rows a page or a list of full records may ask for. */
const MAX_ROWS = 1_000;

interface FactRow {
  result_id: string;
  attack: string;
  attempt: number | string;
  chain: string | null;
  round: number | string;
  outcome: string;
  control: number | string;
  surface: string;
  task_outcome: string | null;
  finished_at: string;
  containment: string | null;
  reply: string | null;
  failed: number | boolean | string | null;
  [column: string]: unknown;
}

export class SqlRunQueries implements RunQueries {
  readonly #sql: SqlContext;
  readonly #runs: SqlRuns;

  constructor(context: SqlContext, runs: SqlRuns) {
    this.#sql = context;
    this.#runs = runs;
  }

  async runCounts(runIds?: readonly string[]): Promise<Map<string, RunCounts>> {
    const counts = new Map<string, RunCounts>();
    if (runIds !== undefined && runIds.length === 0) return counts;
    const ids = runIds === undefined ? undefined : [...new Set(runIds)];
    const inRuns = (column: string) =>
      ids === undefined ? sql`1 = 1` : sql`${sql.ref(column)} in (${sql.join(ids)})`;
    const entry = (runId: string): RunCounts => {
      let found = counts.get(runId);
      if (found === undefined) {
        found = emptyRunCounts();
        counts.set(runId, found);
      }
      return found;
    };
    for (const runId of ids ?? []) entry(runId);
    const outcomes = await this.#sql.read((db) =>
      sql<{
        run_id: string;
        attack: string;
        outcome: string;
        task_outcome: string | null;
        deciding: number | string;
        n: number | string;
      }>`select f.run_id, f.attack, f.outcome, f.task_outcome,
          case when f.chain is null or f.round = c.decider then 1 else 0 end as deciding,
          count(*) as n
        from attempt_facts f
        left join (
          select run_id, chain,
            coalesce(min(case when outcome = 'success' then round end), max(round)) as decider
          from attempt_facts
          where chain is not null and ${inRuns('run_id')}
          group by run_id, chain
        ) c on c.run_id = f.run_id and c.chain = f.chain
        where ${inRuns('f.run_id')}
        group by f.run_id, f.attack, f.outcome, f.task_outcome,
          case when f.chain is null or f.round = c.decider then 1 else 0 end
        order by f.run_id, f.attack, f.outcome, f.task_outcome`.execute(db),
    );
    for (const row of outcomes.rows) {
      entry(row.run_id).perAttackOutcome.push({
        attack: row.attack,
        outcome: row.outcome as AttackOutcome,
        task: row.task_outcome as TaskOutcome | null,
        deciding: Number(row.deciding) === 1,
        count: Number(row.n),
      });
    }
    const gaps = await this.#sql.read((db) =>
      sql<{ run_id: string; reason: string; n: number | string }>`select run_id, reason, count(*) as n
        from attempt_gaps where ${inRuns('run_id')} group by run_id, reason order by run_id, reason`.execute(
        db,
      ),
    );
    for (const row of gaps.rows) entry(row.run_id).gaps.push({ reason: row.reason, attempts: Number(row.n) });
    const latest = await this.#sql.read((db) =>
      sql<{ run_id: string; last: string | null }>`select run_id, max(finished_at) as last
        from attempt_facts where ${inRuns('run_id')} group by run_id`.execute(db),
    );
    for (const row of latest.rows) entry(row.run_id).lastFinishedAt = row.last;
    const containment = await this.#sql.read((db) =>
      sql<{ run_id: string; containment: string }>`select distinct run_id, containment
        from attempt_facts where containment is not null and ${inRuns('run_id')}
        order by run_id, containment`.execute(db),
    );
    for (const row of containment.rows) entry(row.run_id).containment.push(row.containment);
    return counts;
  }

  async countAttempts(runId: string, filter: AttemptFilter): Promise<number> {
    const result = await this.#sql.read((db) =>
      sql<{ n: number | string }>`select count(*) as n from attempt_facts f
        ${this.#replyJoin(filter)}
        where f.run_id = ${runId} and ${this.#filter(filter)}`.execute(db),
    );
    return Number(result.rows[0]?.n ?? 0);
  }

  async pageAttempts(runId: string, request: AttemptPageRequest): Promise<AttemptPage> {
    const columns = ORDER_COLUMNS[request.order];
    if (columns === undefined) throw new InvalidOptionError(`unknown order ${JSON.stringify(request.order)}`);
    const limit = boundedLimit(request.limit);
    const direction = sql.raw(request.descending ? 'desc' : 'asc');
    const after = request.after === undefined ? undefined : decodeCursor(request.after, columns);
    const keyset =
      after === undefined
        ? sql`1 = 1`
        : sql`(${sql.join(columns.map((column) => sql.ref(`f.${column}`)))}) ${sql.raw(request.descending ? '<' : '>')} (${sql.join(after)})`;
    const result = await this.#sql.read((db) =>
      sql<FactRow>`select f.result_id, f.position, f.attack, f.attempt, f.chain, f.round, f.outcome,
            f.outcome_rank, f.control, f.surface, f.task_outcome, f.finished_at, f.containment, f.gap_count,
            ${this.#replyExcerpt()} as reply, ${this.#hasError()} as failed
          from attempt_facts f join attack_results r on r.id = f.result_id
          where f.run_id = ${runId} and ${this.#filter(request)} and ${keyset}
          order by ${sql.join(columns.map((column) => sql`${sql.ref(`f.${column}`)} ${direction}`))}
          limit ${limit + 1}`.execute(db),
    );
    const rows = result.rows.slice(0, limit);
    const gaps = await this.#gapsOf(rows.map((row) => row.result_id));
    const last = rows.at(-1);
    return {
      rows: rows.map((row) => rowOf(row, gaps.get(row.result_id) ?? [])),
      next:
        result.rows.length > limit && last !== undefined
          ? encodeCursor(
              columns.map((column) => {
                const value = last[column] as string | number;
                return NUMERIC_COLUMNS.has(column) ? Number(value) : String(value);
              }),
            )
          : null,
    };
  }

  async firstAttempts(runId: string, filter: AttemptFilter, limit: number): Promise<AttemptRecord[]> {
    if (limit <= 0) return [];
    const run = await this.#run(runId);
    if (run === undefined) return [];
    const rows = await this.#sql.read((db) =>
      sql<{ result_id: string }>`select f.result_id from attempt_facts f
        ${this.#replyJoin(filter)}
        where f.run_id = ${runId} and ${this.#filter(filter)}
        order by f.position, f.attempt, f.round, f.result_id limit ${boundedLimit(limit)}`.execute(db),
    );
    return this.#records(
      run,
      rows.rows.map((row) => row.result_id),
    );
  }

  async getAttempt(runId: string, key: AttemptKey): Promise<AttemptRecord | undefined> {
    const id = await this.#resultIdOf(runId, key);
    if (id === undefined) return undefined;
    const run = await this.#run(runId);
    if (run === undefined) return undefined;
    const [record] = await this.#records(run, [id.result_id]);
    return record;
  }

  async chainRounds(
    runId: string,
    chain: string,
  ): Promise<Array<{ attack: string; attempt: number; round: number; outcome: AttackOutcome }>> {
    const rows = await this.#sql.read((db) =>
      db
        .selectFrom('attempt_facts')
        .select(['attack', 'attempt', 'round', 'outcome'])
        .where('run_id', '=', runId)
        .where('chain', '=', chain)
        .orderBy('round')
        .orderBy('result_id')
        .limit(MAX_ROWS)
        .execute(),
    );
    return rows.map((row) => ({
      attack: row.attack,
      attempt: Number(row.attempt),
      round: Number(row.round),
      outcome: row.outcome as AttackOutcome,
    }));
  }

  async neighbours(runId: string, key: AttemptKey): Promise<{ previous?: AttemptKey; next?: AttemptKey }> {
    const here = await this.#resultIdOf(runId, key);
    if (here === undefined) return {};
    const side = async (before: boolean): Promise<AttemptKey | undefined> => {
      const direction = sql.raw(before ? 'desc' : 'asc');
      const result = await this.#sql.read((db) =>
        sql<{
          attack: string;
          attempt: number | string;
          round: number | string;
        }>`select attack, attempt, round
          from attempt_facts
          where run_id = ${runId}
            and (position, attempt, round, result_id) ${sql.raw(before ? '<' : '>')} (${here.position}, ${here.attempt}, ${here.round}, ${here.result_id})
          order by position ${direction}, attempt ${direction}, round ${direction}, result_id ${direction}
          limit 1`.execute(db),
      );
      const found = result.rows[0];
      return found === undefined ? undefined : keyOf(found);
    };
    const previous = await side(true);
    const next = await side(false);
    return { ...(previous === undefined ? {} : { previous }), ...(next === undefined ? {} : { next }) };
  }

  async pairAttempts(left: string, right: string, limit: number): Promise<PairedAttempts> {
    const pairs = sql`attempt_facts l join attempt_facts r
      on r.run_id = ${right} and r.attack = l.attack and r.attempt = l.attempt and r.round = l.round
      where l.run_id = ${left}`;
    const counts = await this.#sql.read((db) =>
      sql<{ paired: number | string; changed: number | string | null }>`select count(*) as paired,
        sum(case when l.outcome <> r.outcome then 1 else 0 end) as changed from ${pairs}`.execute(db),
    );
    const changed = await this.#sql.read((db) =>
      sql<{
        attack: string;
        attempt: number | string;
        round: number | string;
        left_outcome: string;
        right_outcome: string;
      }>`select l.attack, l.attempt, l.round, l.outcome as left_outcome, r.outcome as right_outcome
        from ${pairs} and l.outcome <> r.outcome
        order by l.position, l.attempt, l.round, l.result_id limit ${boundedLimit(limit)}`.execute(db),
    );
    return {
      changed: changed.rows.map((row) => ({
        ...keyOf(row),
        round: Number(row.round) === 0 ? undefined : Number(row.round),
        left: row.left_outcome as AttackOutcome,
        right: row.right_outcome as AttackOutcome,
      })),
      total: Number(counts.rows[0]?.changed ?? 0),
      paired: Number(counts.rows[0]?.paired ?? 0),
    };
  }

  async changeToken(runId?: string): Promise<string> {
    const result = await this.#sql.read((db) =>
      runId === undefined
        ? sql<{ runs: number | string; n: number | string; last: string | null }>`select
            (select count(*) from runs) as runs, count(*) as n, max(result_id) as last
            from attempt_facts`.execute(db)
        : sql<{ runs: number | string; n: number | string; last: string | null }>`select
            (select count(*) from runs where id = ${runId}) as runs, count(*) as n, max(result_id) as last
            from attempt_facts where run_id = ${runId}`.execute(db),
    );
    const row = result.rows[0];
    return `${Number(row?.runs ?? 0)}-${Number(row?.n ?? 0)}-${row?.last ?? 'none'}`;
  }

  /** The facts' key of one attempt (its first round when the key names none). */
  async #resultIdOf(runId: string, key: AttemptKey) {
    return this.#sql.read((db) => {
      let query = db
        .selectFrom('attempt_facts')
        .select(['result_id', 'position', 'attempt', 'round'])
        .where('run_id', '=', runId)
        .where('attack', '=', key.attack)
        .where('attempt', '=', key.attempt);
      if (key.round !== undefined) query = query.where('round', '=', key.round);
      return query.orderBy('round').orderBy('result_id').executeTakeFirst();
    });
  }

  /** The where clause of a filter over `attempt_facts f` (and `attack_results r` for reply text). */
  #filter(filter: AttemptFilter): RawBuilder<unknown> {
    const parts: RawBuilder<unknown>[] = [];
    if (filter.attacks !== undefined) {
      parts.push(
        filter.attacks.length === 0 ? sql`1 = 0` : sql`f.attack in (${sql.join([...filter.attacks])})`,
      );
    }
    if (filter.outcome !== undefined) {
      if (!(ATTACK_OUTCOMES as readonly string[]).includes(filter.outcome)) {
        throw new InvalidOptionError(`unknown outcome ${JSON.stringify(filter.outcome)}`);
      }
      parts.push(sql`f.outcome_rank = ${OUTCOME_RANKS[filter.outcome]}`);
    }
    if (filter.control !== undefined) parts.push(sql`f.control = ${filter.control ? 1 : 0}`);
    if (filter.surface !== undefined) parts.push(sql`f.surface = ${filter.surface}`);
    if (filter.gap !== undefined) {
      parts.push(
        filter.gap === 'none'
          ? sql`f.gap_count = 0`
          : sql`exists (select 1 from attempt_gaps g where g.run_id = f.run_id and g.reason = ${filter.gap} and g.result_id = f.result_id)`,
      );
    }
    if (hasReplyText(filter)) {
      parts.push(
        this.#sql.backend === 'postgres'
          ? sql`strpos(lower(r.record_json::json ->> 'reply'), lower(${filter.replyText})) > 0`
          : sql`instr(lower(json_extract(r.record_json, '$.reply')), lower(${filter.replyText})) > 0`,
      );
    }
    return parts.length === 0 ? sql`1 = 1` : sql.join(parts, sql` and `);
  }

  #replyJoin(filter: AttemptFilter): RawBuilder<unknown> {
    return hasReplyText(filter) ? sql`join attack_results r on r.id = f.result_id` : sql``;
  }

  #replyExcerpt(): RawBuilder<string | null> {
    return this.#sql.backend === 'postgres'
      ? sql`left(r.record_json::json ->> 'reply', ${REPLY_EXCERPT_CHARS})`
      : sql`substr(json_extract(r.record_json, '$.reply'), 1, ${REPLY_EXCERPT_CHARS})`;
  }

  #hasError(): RawBuilder<boolean> {
    return this.#sql.backend === 'postgres'
      ? sql`(r.record_json::json ->> 'error') is not null`
      : sql`json_extract(r.record_json, '$.error') is not null`;
  }

  async #gapsOf(resultIds: readonly string[]): Promise<Map<string, string[]>> {
    const gaps = new Map<string, string[]>();
    if (resultIds.length === 0) return gaps;
    const rows = await this.#sql.read((db) =>
      db
        .selectFrom('attempt_gaps')
        .select(['result_id', 'reason'])
        .where('result_id', 'in', [...resultIds])
        .orderBy('result_id')
        .orderBy('reason')
        .execute(),
    );
    for (const row of rows) gaps.set(row.result_id, [...(gaps.get(row.result_id) ?? []), row.reason]);
    return gaps;
  }

  async #run(runId: string): Promise<CampaignRun | undefined> {
    try {
      return await this.#runs.getRun(runId);
    } catch (error) {
      if (error instanceof NotFoundError) return undefined;
      throw error;
    }
  }

  /** Full attempt records of these results, in the order given. */
  async #records(run: CampaignRun, resultIds: readonly string[]): Promise<AttemptRecord[]> {
    if (resultIds.length === 0) return [];
    const results = await this.#sql.read(async (db) =>
      parseStoredRows(
        db,
        AttackResultSchema,
        await db
          .selectFrom('attack_results')
          .select(['record_json', 'parts'])
          .where('id', 'in', [...resultIds])
          .execute(),
        'attack result',
      ),
    );
    const byId = new Map(results.map((result) => [result.id, result]));
    const records: AttemptRecord[] = [];
    for (const id of resultIds) {
      const result = byId.get(id);
      if (result === undefined) continue;
      records.push(await this.#runs.attemptOf(run, result));
    }
    return records;
  }
}

function hasReplyText(filter: AttemptFilter): filter is AttemptFilter & { replyText: string } {
  return filter.replyText !== undefined && filter.replyText !== '';
}

function boundedLimit(limit: number): number {
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new InvalidOptionError(`a page holds 1 to ${MAX_ROWS} rows; ${limit} was asked for`);
  }
  return Math.min(limit, MAX_ROWS);
}

function keyOf(row: { attack: string; attempt: number | string; round: number | string }): AttemptKey {
  const round = Number(row.round);
  return { attack: row.attack, attempt: Number(row.attempt), ...(round === 0 ? {} : { round }) };
}

function rowOf(row: FactRow, gapCodes: string[]): AttemptRow {
  const round = Number(row.round);
  return {
    attack: row.attack,
    attempt: Number(row.attempt),
    chain: row.chain,
    round: round === 0 ? undefined : round,
    outcome: row.outcome as AttackOutcome,
    control: Number(row.control) === 1,
    surface: row.surface,
    taskOutcome: row.task_outcome as TaskOutcome | null,
    finishedAt: row.finished_at,
    containment: row.containment,
    gapCodes,
    reply: row.reply,
    failed: row.failed === true || Number(row.failed) === 1,
  };
}

/** A cursor: the last row's sort key, as base64url JSON. */
function encodeCursor(values: ReadonlyArray<string | number>): string {
  return Buffer.from(JSON.stringify(values)).toString('base64url');
}

/** The sort key a cursor holds, each value of its column's type; a cursor for another order is refused. */
function decodeCursor(cursor: string, columns: readonly string[]): Array<string | number> {
  let values: unknown;
  try {
    values = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    values = undefined;
  }
  if (
    !Array.isArray(values) ||
    values.length !== columns.length ||
    !values.every((value, index) =>
      NUMERIC_COLUMNS.has(columns[index] as string)
        ? typeof value === 'number' && Number.isSafeInteger(value)
        : typeof value === 'string' && value.length <= 1_000,
    )
  ) {
    throw new InvalidOptionError('the page cursor is not one this viewer gave: start from the first page');
  }
  return values as Array<string | number>;
}
