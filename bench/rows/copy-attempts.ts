import Database from 'better-sqlite3';
import pg from 'pg';

/**
 * Row 15's large runs, built fast: the run's attack results, with their attempt facts and gap codes, copied
 * in SQL (`insert … select`) until the run holds `attempts`. Copy k renumbers each attempt by k × the
 * attempts per attack already stored and suffixes every id with `~k` (inside the record's JSON too), so each
 * copy is a distinct attempt as the viewer and the report count and page them; the copies share the
 * originals' conversations, scores, observations and record parts (what storing the same records again
 * through the Memory API would do, a hundred times faster).
 */
export async function copyAttempts(target: string, runId: string, attempts: number): Promise<void> {
  if (/^postgres(ql)?:\/\//.test(target)) await copyOnPostgres(target, runId, attempts);
  else copyOnSqlite(target, runId, attempts);
}

function copyOnSqlite(file: string, runId: string, attempts: number): void {
  const db = new Database(file);
  try {
    const base = db
      .prepare(`select count(*) as n, max(attempt) as top from attempt_facts where run_id = ?`)
      .get(runId) as { n: number; top: number };
    const copy = db.transaction((k: number) => {
      const suffix = `~${k}`;
      const shift = k * base.top;
      db.prepare(
        `insert into attack_results (id, run_id, campaign, attack, attempt, conversation_id, outcome, task_outcome,
           score_id, created_at, record_json, parts)
         select id || @suffix, run_id, campaign, attack, attempt + @shift, conversation_id, outcome, task_outcome,
           score_id, created_at, json_set(record_json, '$.id', id || @suffix, '$.attempt', attempt + @shift), parts
         from attack_results where run_id = @runId and instr(id, '~') = 0`,
      ).run({ suffix, shift, runId });
      db.prepare(
        `insert into attempt_facts (result_id, run_id, position, attack, attempt, chain, round, outcome, outcome_rank,
           control, surface, task_outcome, finished_at, containment, gap_count)
         select result_id || @suffix, run_id, position, attack, attempt + @shift, chain || @suffix, round, outcome,
           outcome_rank, control, surface, task_outcome, finished_at, containment, gap_count
         from attempt_facts where run_id = @runId and instr(result_id, '~') = 0`,
      ).run({ suffix, shift, runId });
      db.prepare(
        `insert into attempt_gaps (result_id, run_id, reason)
         select result_id || @suffix, run_id, reason from attempt_gaps
         where run_id = @runId and instr(result_id, '~') = 0`,
      ).run({ suffix, runId });
    });
    for (let k = 1; (k + 1) * base.n <= attempts; k++) copy(k);
  } finally {
    db.close();
  }
}

async function copyOnPostgres(url: string, runId: string, attempts: number): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const base = (
      await client.query<{ n: string; top: number }>(
        'select count(*) as n, max(attempt) as top from attempt_facts where run_id = $1',
        [runId],
      )
    ).rows[0] as { n: string; top: number };
    const n = Number(base.n);
    for (let k = 1; (k + 1) * n <= attempts; k++) {
      const args = [runId, `~${k}`, k * base.top];
      await client.query('begin');
      await client.query(
        `insert into attack_results (id, run_id, campaign, attack, attempt, conversation_id, outcome, task_outcome,
           score_id, created_at, record_json, parts)
         select id || $2, run_id, campaign, attack, attempt + $3, conversation_id, outcome, task_outcome,
           score_id, created_at,
           jsonb_set(jsonb_set(record_json::jsonb, '{id}', to_jsonb(id || $2)), '{attempt}', to_jsonb(attempt + $3))::text,
           parts
         from attack_results where run_id = $1 and strpos(id, '~') = 0`,
        args,
      );
      await client.query(
        `insert into attempt_facts (result_id, run_id, position, attack, attempt, chain, round, outcome, outcome_rank,
           control, surface, task_outcome, finished_at, containment, gap_count)
         select result_id || $2, run_id, position, attack, attempt + $3, chain || $2, round, outcome,
           outcome_rank, control, surface, task_outcome, finished_at, containment, gap_count
         from attempt_facts where run_id = $1 and strpos(result_id, '~') = 0`,
        args,
      );
      await client.query(
        `insert into attempt_gaps (result_id, run_id, reason)
         select result_id || $2, run_id, reason from attempt_gaps
         where run_id = $1 and strpos(result_id, '~') = 0`,
        args.slice(0, 2),
      );
      await client.query('commit');
    }
  } finally {
    await client.end();
  }
}
