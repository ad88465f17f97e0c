import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { CampaignSchema } from '../../../src/attacks/campaign.js';
import { demoCampaign } from '../../../src/attacks/demo-campaign.js';
import { MemoryAttemptRecorder } from '../../../src/attacks/memory-recorder.js';
import { runCampaign } from '../../../src/attacks/run-campaign.js';
import { ImmutableRecordError, InvalidRecordError } from '../../../src/errors.js';
import type { ArchiveRecord } from '../../../src/memory/archive.js';
import type { Memory } from '../../../src/memory/memory.js';
import { migrate } from '../../../src/memory/migrations.js';
import { openMemory } from '../../../src/memory/open-memory.js';
import type { Tables } from '../../../src/memory/tables.js';
import type { AttemptRecord } from '../../../src/models/attempt-record.js';
import { MockAgentTarget } from '../../../src/targets/mock-agent-target.js';
import type { TestBackend, TestDatabase } from './backends.js';
import { attackResult, observation, score } from './fixtures.js';

/**
 * Parts of records stored once per distinct JSON (memory schema 6): a campaign's attempts repeat their
 * template's baseline manifest, the files the agent wrote, the target, the transcript and the scorer's
 * expectation; each is one row however many attempts record it, every record reads back exactly as it was
 * stored (through the Memory API, an export and an import), a memory of schema 5 is rewritten the same way
 * when opened, and a part changed behind Witness's back is refused on read. Run once per backend.
 */

const count = async (database: TestDatabase, statement: string): Promise<number> =>
  Number(Object.values((await database.query(statement))[0] ?? {})[0] ?? 0);

const inOrder = (records: readonly AttemptRecord[]): AttemptRecord[] =>
  [...records].sort((a, b) => a.attack.localeCompare(b.attack) || a.attempt - b.attempt);

export function recordPartsSuite(backend: TestBackend): void {
  describe(`record parts on ${backend.name}`, () => {
    if (backend.skip !== undefined) {
      it(`runs the record-part tests on ${backend.name}`, { skip: backend.skip }, () => {});
      return;
    }
    let database: TestDatabase;
    let memory: Memory;
    let attempts: AttemptRecord[];
    let runId: string;

    before(async () => {
      database = await backend.fresh();
      memory = await openMemory(database.target);
      const campaign = CampaignSchema.parse({ ...demoCampaign('vulnerable'), attempts: 3 });
      const run = await runCampaign({
        campaign,
        target: new MockAgentTarget({ mode: 'vulnerable' }),
        recorder: new MemoryAttemptRecorder(memory),
      });
      attempts = run.attempts;
      runId = run.run.runId;
    });
    after(async () => {
      await memory.close();
      await database.cleanup();
    });

    it("stores the template's baseline entries once for every attempt, and reads each attempt back as it was", async () => {
      assert.equal(attempts.length, 12);
      const rows = await database.query(
        `select parts from attack_results where run_id = '${runId}' and parts is not null`,
      );
      assert.equal(rows.length, attempts.length);
      const baselines = new Set(
        rows.map((row) => JSON.parse(String(row.parts))['changes.0.baseline.entries'] as number),
      );
      assert.equal(baselines.size, 1, 'every attempt starts from the same template: one stored baseline');
      const targets = new Set(rows.map((row) => JSON.parse(String(row.parts)).target as number));
      assert.equal(targets.size, 1);
      // Each reference would have been a copy; the copies are far fewer rows.
      const references = (
        await database.query('select parts from attack_results union all select parts from scores')
      ).reduce(
        (sum, row) => sum + (row.parts === null ? 0 : Object.keys(JSON.parse(String(row.parts))).length),
        0,
      );
      const parts = await count(database, 'select count(*) from record_parts');
      assert.ok(parts * 2 < references, `${parts} parts for ${references} references`);
      const stored = await memory.listAttempts(runId);
      assert.deepEqual(inOrder(stored), inOrder(attempts));
    });

    it('exports and imports whole records, and the import stores each part once too', async () => {
      const exported: ArchiveRecord[] = [];
      for await (const record of memory.exportRecords()) exported.push(record);
      const copy = await backend.fresh();
      const target = await openMemory(copy.target);
      try {
        await target.importRecords(exported);
        const again: ArchiveRecord[] = [];
        for await (const record of target.exportRecords()) again.push(record);
        assert.equal(JSON.stringify(again), JSON.stringify(exported));
        assert.equal(
          await count(copy, 'select count(*) from record_parts'),
          await count(database, 'select count(*) from record_parts'),
        );
      } finally {
        await target.close();
        await copy.cleanup();
      }
    });

    it('refuses a part changed behind its back, and keeps parts immutable', async () => {
      const scratch = await backend.fresh();
      const own = await openMemory(scratch.target);
      try {
        await own.saveScore(score('s-1', { observationIds: ['o-1'] }), [observation('o-1')]);
        await assert.rejects(
          scratch.exec("update record_parts set json = '{}'"),
          /witness_immutable|rows cannot be changed/,
        );
        await scratch.exec(
          backend.name === 'sqlite'
            ? 'drop trigger record_parts_no_update'
            : 'alter table record_parts disable trigger record_parts_immutable',
        );
        await scratch.exec(
          // Still a valid scorer, but not the one the score was stored with.
          `update record_parts set json = replace(json, '"/ws"', '"/elsewhere"') where json like '%test_scorer%'`,
        );
        await assert.rejects(own.getScore('s-1'), InvalidRecordError);
      } finally {
        await own.close();
        await scratch.cleanup();
      }
    });

    it('rewrites a memory of schema 5 when opened: the records read back unchanged, and stay immutable', async () => {
      const old = await backend.fresh();
      let reopened: Memory | undefined;
      const stored = observation('o-old');
      const verdict = score('s-old', { observationIds: ['o-old'], value: null });
      const result = attackResult('r-old', 'c-old', { scoreId: 's-old' });
      try {
        const db =
          backend.name === 'sqlite'
            ? new Kysely<Tables>({ dialect: new SqliteDialect({ database: new Database(old.target) }) })
            : new Kysely<Tables>({
                dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: old.target, max: 1 }) }),
              });
        try {
          await migrate(db, backend.name, () => '2025-01-01T00:00:00.000Z', 5);
          await db
            .insertInto('conversations')
            .values({ id: 'c-old', created_at: '2025-01-02T03:04:00.000Z', record_json: conversationJson() })
            .execute();
          await db
            .insertInto('observations')
            .values({
              id: stored.id,
              source_hash: 'x',
              acquisition: stored.acquisition,
              uri: stored.scorable.uri,
              match: stored.scorable.match,
              observed_at: stored.observedAt,
              record_json: JSON.stringify(stored),
            })
            .execute();
          await db
            .insertInto('scores')
            .values({
              id: verdict.id,
              status: verdict.status,
              value: null,
              scorable_type: 'surface',
              scorer_hash: 'x',
              message_piece_id: null,
              created_at: verdict.createdAt,
              record_json: JSON.stringify(verdict),
            })
            .execute();
          await db
            .insertInto('attack_results')
            .values({
              id: result.id,
              run_id: null,
              campaign: result.campaign,
              attack: result.attack,
              attempt: result.attempt,
              conversation_id: 'c-old',
              outcome: result.outcome,
              task_outcome: null,
              score_id: 's-old',
              created_at: result.createdAt,
              record_json: JSON.stringify(result),
            })
            .execute();
        } finally {
          await db.destroy();
        }
        reopened = await openMemory(old.target);
        assert.equal(
          await count(old, "select count(*) from scores where parts is not null and id = 's-old'"),
          1,
        );
        assert.equal(
          await count(old, "select count(*) from attack_results where parts is not null and id = 'r-old'"),
          1,
        );
        assert.deepEqual(await reopened.getObservation('o-old'), stored);
        assert.deepEqual(await reopened.getScore('s-old'), verdict);
        assert.deepEqual(await reopened.getAttackResult('r-old'), result);
        await assert.rejects(old.exec("update attack_results set outcome = 'success'"), /witness_immutable/);
        await assert.rejects(old.exec("update scores set status = 'complete'"), /witness_immutable/);
        await assert.rejects(old.exec("update observations set uri = '/x'"), /witness_immutable/);
        // Storing the same records again is still a no-op, a different one under the same id refused.
        await reopened.saveScore(verdict, [stored]);
        await assert.rejects(
          reopened.saveScore({ ...verdict, rationale: 'Something else.' }, [stored]),
          ImmutableRecordError,
        );
      } finally {
        await reopened?.close();
        await old.cleanup();
      }
    });
  });
}

function conversationJson(): string {
  return JSON.stringify({ id: 'c-old', createdAt: '2025-01-02T03:04:00.000Z', labels: {}, metadata: {} });
}
