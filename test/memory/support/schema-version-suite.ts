import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SchemaTooNewError } from '../../../src/errors.js';
import { MEMORY_SCHEMA_VERSION } from '../../../src/memory/migrations.js';
import { openMemory } from '../../../src/memory/open-memory.js';
import type { TestBackend } from './backends.js';
import { score } from './fixtures.js';

/** The schema version tests for one backend (SQLite in the normal lane, PostgreSQL in the heavy lane). */
export function schemaVersionSuite(backend: TestBackend): void {
  describe(`memory schema versions on ${backend.name}`, () => {
    if (backend.skip !== undefined) {
      it(`runs the schema version tests on ${backend.name}`, { skip: backend.skip }, () => {});
      return;
    }

    it('records the current schema version when it creates a database', async () => {
      const database = await backend.fresh();
      try {
        await (await openMemory(database.target)).close();
        await (await openMemory(database.target)).close();
        assert.deepEqual(await database.query('select id, version from witness_schema'), [
          { id: 1, version: MEMORY_SCHEMA_VERSION },
        ]);
      } finally {
        await database.cleanup();
      }
    });

    it('refuses a database written by a newer schema version and leaves it untouched', async () => {
      const database = await backend.fresh();
      try {
        const memory = await openMemory(database.target);
        await memory.saveScore(score('s1'), []);
        await memory.close();
        const newer = MEMORY_SCHEMA_VERSION + 1;
        await database.exec(`update witness_schema set version = ${newer}, migrated_at = 'future'`);
        await assert.rejects(openMemory(database.target), (error: unknown) => {
          assert.ok(error instanceof SchemaTooNewError);
          assert.equal(error.code, 'schema_too_new');
          assert.equal(error.foundVersion, newer);
          assert.equal(error.supportedVersion, MEMORY_SCHEMA_VERSION);
          assert.match(error.message, /newer Witness/);
          return true;
        });
        assert.deepEqual(await database.query('select version, migrated_at from witness_schema'), [
          { version: newer, migrated_at: 'future' },
        ]);
        assert.deepEqual(await database.query('select id from scores'), [{ id: 's1' }]);
      } finally {
        await database.cleanup();
      }
    });
  });
}
