import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { Memory } from '../../src/memory/memory.js';
import { openMemory } from '../../src/memory/open-memory.js';
import { BACKENDS, type TestDatabase } from './support/backends.js';
import { observation } from './support/fixtures.js';

/**
 * Nothing acknowledged is lost (SPEC §7): writers are real child processes, killed with SIGKILL mid-stream
 * or run side by side on one database.
 */

const WRITER = path.resolve('test-support/memory-writer.mjs');

function startWriter(target: string, prefix: string, count: number): ChildProcess {
  return spawn(process.execPath, [WRITER, target, prefix, String(count)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Every id the writer printed (each one printed only after its write committed), and how it ended. */
async function collect(
  child: ChildProcess,
  onId: (id: string, count: number) => void = () => {},
): Promise<{ ids: string[]; code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  const ids: string[] = [];
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  for await (const line of lines) {
    ids.push(line);
    onId(line, ids.length);
  }
  return { ids, stderr, ...(await ended) };
}

/** Every stored score has all its observations and links; every observation belongs to a score. */
async function assertConsistent(memory: Memory, database: TestDatabase): Promise<number> {
  const scores = await memory.listScores();
  const referenced = new Set<string>();
  for (const score of scores) {
    const evidence = await memory.observationsForScore(score.id);
    assert.deepEqual(
      evidence.map((o) => o.id),
      score.observationIds,
    );
    for (const id of score.observationIds) referenced.add(id);
  }
  const stored = (await database.query('select id from observations')).map((row) => row.id);
  assert.deepEqual([...referenced].sort(), [...stored].sort() as string[]);
  return scores.length;
}

for (const backend of BACKENDS) {
  describe(`memory durability on ${backend.name}`, { timeout: 180_000 }, () => {
    if (backend.skip !== undefined) {
      it(`runs the durability tests on ${backend.name}`, { skip: backend.skip }, () => {});
      return;
    }
    let database: TestDatabase;
    beforeEach(async () => {
      database = await backend.fresh();
      // Created up front so the writers start writing at once.
      await (await openMemory(database.target)).close();
    });
    afterEach(async () => {
      await database.cleanup();
    });

    it('keeps every score acknowledged before the writer was SIGKILLed, and nothing half-written', async () => {
      const child = startWriter(database.target, 'k', 100_000);
      const result = await collect(child, (_id, count) => {
        if (count === 40) child.kill('SIGKILL');
      });
      assert.equal(result.signal, 'SIGKILL', result.stderr);
      assert.ok(result.ids.length >= 40, `only ${result.ids.length} acknowledged`);
      assert.ok(result.ids.length < 100_000, 'the writer finished before it was killed');

      const memory = await openMemory(database.target);
      try {
        for (const id of result.ids) {
          const score = await memory.getScore(id);
          const evidence = await memory.observationsForScore(id);
          assert.deepEqual(
            evidence.map((o) => o.id),
            score.observationIds,
          );
        }
        const stored = await assertConsistent(memory, database);
        // At most the one write in flight when the kill landed committed without being acknowledged.
        assert.ok(stored - result.ids.length <= 1, `${stored} stored, ${result.ids.length} acknowledged`);
        if (backend.name === 'sqlite') {
          assert.deepEqual(await database.query('pragma integrity_check'), [{ integrity_check: 'ok' }]);
        }
      } finally {
        await memory.close();
      }
    });

    it('loses nothing when several writer processes share the database', async () => {
      const writers = ['a', 'b', 'c', 'd'].map((prefix) => startWriter(database.target, prefix, 25));
      const results = await Promise.all(writers.map((child) => collect(child)));
      for (const result of results) assert.equal(result.code, 0, result.stderr);
      const acknowledged = results.flatMap((result) => result.ids);
      assert.equal(acknowledged.length, 100);

      const memory = await openMemory(database.target);
      try {
        assert.equal(await assertConsistent(memory, database), 100);
        for (const id of acknowledged) await memory.getScore(id);
        assert.deepEqual(await memory.getObservation('shared'), observation('shared', 'shared payload'));
        assert.equal((await memory.listScores({ observationId: 'shared' })).length, 4 * 5);
        for (const prefix of ['a', 'b', 'c', 'd']) {
          const turns = (await memory.listMessagePieces(`${prefix}-c`)).map((piece) => piece.turn);
          assert.deepEqual(
            turns,
            Array.from({ length: 25 }, (_, i) => i),
          );
          assert.equal((await memory.listScores({ conversationId: `${prefix}-c` })).length, 25);
        }
      } finally {
        await memory.close();
      }
    });
  });
}

describe('concurrent first opening of a new SQLite file', { timeout: 180_000 }, () => {
  it('lets several processes create and migrate the same new file at once', async () => {
    const { sqliteBackend } = await import('./support/backends.js');
    const database = await sqliteBackend.fresh();
    try {
      const writers = ['a', 'b', 'c', 'd', 'e'].map((prefix) => startWriter(database.target, prefix, 3));
      const results = await Promise.all(writers.map((child) => collect(child)));
      for (const result of results) assert.equal(result.code, 0, result.stderr);
      const memory = await openMemory(database.target);
      try {
        assert.equal(await assertConsistent(memory, database), 15);
      } finally {
        await memory.close();
      }
    } finally {
      await database.cleanup();
    }
  });
});
