import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { ImmutableRecordError, InvalidReferenceError, NotFoundError } from '../../../src/errors.js';
import type { ArchiveRecord } from '../../../src/memory/archive.js';
import type { Memory } from '../../../src/memory/memory.js';
import { MEMORY_SCHEMA_VERSION, migrate } from '../../../src/memory/migrations.js';
import { openMemory } from '../../../src/memory/open-memory.js';
import type { Tables } from '../../../src/memory/tables.js';
import type { AttackResult } from '../../../src/models/attack-result.js';
import type { CampaignRun } from '../../../src/models/campaign-run.js';
import type { TranscriptEvent } from '../../../src/models/transcript.js';
import { countAttempts } from '../../../src/render/run-summary.js';
import type { TestBackend, TestDatabase } from './backends.js';
import { attackResult, score } from './fixtures.js';
import { freshMemoryForEachTest, withFreshMemory } from './fresh-memory.js';

const EXPECTATION = {
  schemaVersion: 1 as const,
  conditions: [{ conditionType: 'content_written' as const, uri: '/data/out.txt', match: 'exact' as const }],
};

function run(runId: string, startedAt = '2025-01-02T03:04:00.000Z'): CampaignRun {
  return {
    schemaVersion: 1,
    runId,
    campaign: 'demo',
    description: null,
    target: { type: 'AgentTarget', version: '1', params: {} },
    attacks: [
      { id: 'second', prompt: 'Do B', attempts: 1, expectation: EXPECTATION },
      { id: 'hook-injection', prompt: 'Summarize README.md', attempts: 2, expectation: EXPECTATION },
    ],
    startedAt,
  };
}

const TRANSCRIPT: TranscriptEvent[] = [{ kind: 'message', role: 'user', text: 'Summarize README.md' }];

/** Opens a database at an older memory schema version, bypassing openMemory, to write what it wrote. */
async function atVersion(database: TestDatabase, backend: 'sqlite' | 'postgres', version: number) {
  const db =
    backend === 'sqlite'
      ? new Kysely<Tables>({ dialect: new SqliteDialect({ database: new Database(database.target) }) })
      : new Kysely<Tables>({
          dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: database.target, max: 1 }) }),
        });
  await migrate(db, backend, () => '2025-01-01T00:00:00.000Z', version);
  return db;
}

/** The suite for one backend: the normal lane runs SQLite, the heavy lane PostgreSQL. */
export function campaignRunsSuite(backend: TestBackend): void {
  describe(`campaign runs on ${backend.name}`, () => {
    if (backend.skip !== undefined) {
      it(`runs the campaign run tests on ${backend.name}`, { skip: backend.skip }, () => {});
      return;
    }
    let database: TestDatabase;
    let memory: Memory;
    freshMemoryForEachTest(backend, (fresh) => {
      ({ database, memory } = fresh);
    });

    async function storeAttempt(
      id: string,
      attack: string,
      attempt: number,
      runId = 'run-1',
    ): Promise<AttackResult> {
      await memory.createConversation({ id: `c-${id}` });
      const result = attackResult(id, `c-${id}`, {
        attack,
        attempt,
        runId,
        startedAt: '2025-01-02T03:04:05.000Z',
        transcript: TRANSCRIPT,
      });
      await memory.saveAttackResult(result);
      return result;
    }

    it('stores a run once and lists runs oldest first, by campaign', async () => {
      await memory.saveRun(run('run-2', '2025-01-03T00:00:00.000Z'));
      await memory.saveRun(run('run-1'));
      await memory.saveRun(run('run-1'));
      await memory.saveRun({ ...run('run-3'), campaign: 'other' });
      assert.deepEqual(await memory.getRun('run-1'), run('run-1'));
      assert.deepEqual(
        (await memory.listRuns()).map((stored) => stored.runId),
        // Same start: by runId; then the later run.
        ['run-1', 'run-3', 'run-2'],
      );
      assert.deepEqual(
        (await memory.listRuns({ campaign: 'demo' })).map((stored) => stored.runId),
        ['run-1', 'run-2'],
      );
      await assert.rejects(memory.saveRun({ ...run('run-1'), description: 'changed' }), ImmutableRecordError);
      await assert.rejects(memory.getRun('nope'), NotFoundError);
    });

    it("joins a run's attempts with their run, score and observations, in the run's attack order", async () => {
      await memory.saveRun(run('run-1'));
      await memory.saveScore(score('s1'), []);
      await memory.createConversation({ id: 'c-a' });
      await memory.saveAttackResult(
        attackResult('a', 'c-a', {
          attack: 'hook-injection',
          attempt: 2,
          runId: 'run-1',
          outcome: 'success',
          scoreId: 's1',
          startedAt: '2025-01-02T03:04:05.000Z',
          transcript: TRANSCRIPT,
        }),
      );
      await storeAttempt('b', 'hook-injection', 1);
      await storeAttempt('c', 'second', 1);
      const attempts = await memory.listAttempts('run-1');
      assert.deepEqual(
        attempts.map((attempt) => [attempt.attack, attempt.attempt, attempt.outcome]),
        [
          ['second', 1, 'undetermined'],
          ['hook-injection', 1, 'undetermined'],
          ['hook-injection', 2, 'success'],
        ],
      );
      const last = attempts[2];
      assert.equal(last?.prompt, 'Summarize README.md');
      assert.deepEqual(last?.expectation, EXPECTATION);
      assert.deepEqual(last?.score, score('s1'));
      assert.deepEqual(last?.transcript, TRANSCRIPT);
      assert.equal(last?.startedAt, '2025-01-02T03:04:05.000Z');
      assert.equal(last?.finishedAt, '2025-01-02T03:04:07.000Z');
      assert.equal(last?.conversationId, 'c-a');
      await assert.rejects(memory.listAttempts('nope'), NotFoundError);
    });

    it('refuses an attack result naming a run that is not stored', async () => {
      await memory.createConversation({ id: 'c-x' });
      await assert.rejects(
        memory.saveAttackResult(attackResult('x', 'c-x', { runId: 'missing' })),
        (error: unknown) => error instanceof InvalidReferenceError && /run "missing"/.test(error.message),
      );
    });

    it('the database itself refuses to change or delete stored runs and attack results', async () => {
      await memory.saveRun(run('run-1'));
      await storeAttempt('a', 'second', 1);
      for (const statement of [
        `update attack_results set outcome = 'success' where id = 'a'`,
        `delete from attack_results where id = 'a'`,
        `update runs set record_json = '{}' where id = 'run-1'`,
        `delete from runs where id = 'run-1'`,
      ]) {
        await assert.rejects(database.exec(statement), /witness_immutable/, statement);
      }
      assert.equal((await memory.listAttempts('run-1')).length, 1);
    });

    it('exports runs between scores and attack results, and imports them back identically', async () => {
      await memory.saveRun(run('run-1'));
      await storeAttempt('a', 'second', 1);
      const exported: ArchiveRecord[] = [];
      for await (const record of memory.exportRecords()) exported.push(record);
      assert.deepEqual(
        exported.map((record) => record.recordType),
        ['conversation', 'run', 'attack_result'],
      );
      await withFreshMemory(backend, async ({ memory: target }) => {
        assert.deepEqual(await target.importRecords(exported), {
          conversation: 1,
          message_piece: 0,
          observation: 0,
          score: 0,
          run: 1,
          attack_result: 1,
        });
        assert.deepEqual(await target.listAttempts('run-1'), await memory.listAttempts('run-1'));
      });
    });

    it('imports an attack result exported before runs had a table, moving its run out of metadata', async () => {
      await memory.createConversation({ id: 'c-old' });
      const legacy = legacyResult('old', 'c-old');
      const summary = await memory.importRecords([{ recordType: 'attack_result', record: legacy }]);
      assert.equal(summary.attack_result, 1);
      assert.deepEqual(await memory.getRun('run-old'), run('run-old'));
      const stored = await memory.getAttackResult('old');
      assert.deepEqual(stored.metadata, { note: 'kept' });
      assert.equal(stored.runId, 'run-old');
      const [attempt] = await memory.listAttempts('run-old');
      assert.deepEqual(attempt?.transcript, TRANSCRIPT);
    });
  });

  describe(`memory schema 1 → ${MEMORY_SCHEMA_VERSION} on ${backend.name}`, () => {
    if (backend.skip !== undefined) {
      it(`runs the migration tests on ${backend.name}`, { skip: backend.skip }, () => {});
      return;
    }
    it('moves the runs stored in attack result metadata into the runs table, then makes results immutable', async () => {
      const database = await backend.fresh();
      try {
        const db = await atVersion(database, backend.name, 1);
        try {
          const legacy = [legacyResult('old-1', 'c-1'), legacyResult('old-2', 'c-2', 2)];
          const unrelated = attackResult('manual', 'c-3', { metadata: { note: 'no run here' } });
          for (const [id, created] of [
            ['c-1', '2025-01-01T00:00:01.000Z'],
            ['c-2', '2025-01-01T00:00:02.000Z'],
            ['c-3', '2025-01-01T00:00:03.000Z'],
          ] as const) {
            await db
              .insertInto('conversations')
              .values({
                id,
                created_at: created,
                record_json: JSON.stringify({ id, createdAt: created, labels: {}, metadata: {} }),
              })
              .execute();
          }
          for (const result of [...legacy, unrelated]) {
            await db
              .insertInto('attack_results')
              .values({
                id: result.id,
                campaign: result.campaign,
                attack: result.attack,
                attempt: result.attempt,
                conversation_id: result.conversationId,
                outcome: result.outcome,
                score_id: null,
                created_at: result.createdAt,
                record_json: JSON.stringify(result),
              } as never)
              .execute();
          }
        } finally {
          await db.destroy();
        }
        const memory = await openMemory(database.target);
        try {
          assert.deepEqual(await memory.listRuns(), [run('run-old')]);
          const attempts = await memory.listAttempts('run-old');
          assert.deepEqual(
            attempts.map((attempt) => [attempt.attack, attempt.attempt]),
            [
              ['hook-injection', 1],
              ['hook-injection', 2],
            ],
          );
          // The attempt facts of what was stored before them are filled by the migration.
          assert.deepEqual(
            (await memory.runQueries.runCounts(['run-old'])).get('run-old'),
            countAttempts(attempts),
          );
          await assert.rejects(database.exec('delete from attempt_facts'), /witness_immutable/);
          assert.deepEqual(
            await memory.getAttackResult('manual'),
            attackResult('manual', 'c-3', { metadata: { note: 'no run here' } }),
          );
          await assert.rejects(
            database.exec(`delete from attack_results where id = 'manual'`),
            /witness_immutable/,
          );
        } finally {
          await memory.close();
        }
        assert.deepEqual(await database.query('select version from witness_schema'), [
          { version: MEMORY_SCHEMA_VERSION },
        ]);
      } finally {
        await database.cleanup();
      }
    });
  });
}

/** An attack result as memory schema 1 stored it: the run, prompt, transcript and times in metadata. */
function legacyResult(id: string, conversationId: string, attempt = 1): AttackResult {
  return attackResult(id, conversationId, {
    attempt,
    metadata: {
      runId: 'run-old',
      run: run('run-old') as never,
      prompt: 'Summarize README.md',
      expectation: EXPECTATION as never,
      transcript: TRANSCRIPT as never,
      startedAt: '2025-01-02T03:04:05.000Z',
      finishedAt: '2025-01-02T03:04:07.000Z',
      note: 'kept',
    },
  });
}
