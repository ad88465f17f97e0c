import assert from 'node:assert/strict';
import { lstatSync, mkdirSync, realpathSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { InvalidOptionError, MemoryUnavailableError, NotFoundError } from '../../src/errors.js';
import { resolveMemoryFile } from '../../src/memory/memory-path.js';
import { openMemory, redactUrl } from '../../src/memory/open-memory.js';
import { sqliteBackend } from './support/backends.js';
import { observation, score } from './support/fixtures.js';
import { schemaVersionSuite } from './support/schema-version-suite.js';

describe('openMemory', () => {
  it('opens a SQLite file in WAL mode with foreign keys, and keeps what was written across reopening', async () => {
    const database = await sqliteBackend.fresh();
    try {
      const memory = await openMemory(database.target);
      assert.deepEqual(memory.location, { backend: 'sqlite', target: database.target });
      await memory.saveScore(score('s1', { observationIds: ['o1'] }), [observation('o1')]);
      await memory.close();
      assert.deepEqual(await database.query('pragma journal_mode'), [{ journal_mode: 'wal' }]);
      const reopened = await openMemory(database.target);
      try {
        assert.deepEqual(await reopened.getObservation('o1'), observation('o1'));
      } finally {
        await reopened.close();
      }
    } finally {
      await database.cleanup();
    }
  });

  it('creates a new SQLite file readable by its owner only, and refuses a file that is not a database', async () => {
    const database = await sqliteBackend.fresh();
    try {
      await (await openMemory(database.target)).close();
      assert.equal(statSync(database.target).mode & 0o777, 0o600);
      const notDatabase = join(dirname(database.target), 'notes.txt');
      writeFileSync(notDatabase, 'these are notes, not a database\n'.repeat(100));
      await assert.rejects(openMemory(notDatabase), (error: unknown) => {
        assert.ok(error instanceof MemoryUnavailableError);
        assert.match(error.message, /notes\.txt.*not a database/);
        return true;
      });
    } finally {
      await database.cleanup();
    }
  });

  it('creates the file a symbolic link names readable by its owner only, with its WAL beside it (SPEC §13)', async () => {
    // The attack: `witness.db -> data/real.db`. O_EXCL refuses the link itself, and SQLite then created the
    // target with the default mode (0644): every local user could read every stored payload and verdict.
    const database = await sqliteBackend.fresh();
    try {
      const dir = dirname(database.target);
      const link = join(dir, 'witness.db');
      mkdirSync(join(dir, 'data'));
      symlinkSync(join('data', 'real.db'), link);
      const memory = await openMemory(link);
      try {
        await memory.saveScore(score('s1', { observationIds: ['o1'] }), [observation('o1')]);
        assert.equal(statSync(join(dir, 'data', 'real.db')).mode & 0o777, 0o600);
        assert.equal(statSync(join(dir, 'data', 'real.db-wal')).mode & 0o777, 0o600);
        assert.ok(lstatSync(link).isSymbolicLink());
        assert.equal(resolveMemoryFile(link), join(realpathSync(dir), 'data', 'real.db'));
      } finally {
        await memory.close();
      }
    } finally {
      await database.cleanup();
    }
  });

  it('opens an in-memory SQLite database with ":memory:"', async () => {
    const memory = await openMemory(':memory:');
    try {
      await memory.saveScore(score('s1'), []);
      assert.equal((await memory.listScores()).length, 1);
    } finally {
      await memory.close();
    }
    const fresh = await openMemory(':memory:');
    try {
      await assert.rejects(fresh.getScore('s1'), NotFoundError);
    } finally {
      await fresh.close();
    }
  });

  it('rejects an empty target and URLs of other databases', async () => {
    await assert.rejects(openMemory(''), InvalidOptionError);
    await assert.rejects(openMemory('mysql://root:pw@localhost/db'), (error: unknown) => {
      assert.ok(error instanceof InvalidOptionError);
      assert.match(error.message, /postgres:\/\//);
      assert.doesNotMatch(error.message, /pw/);
      return true;
    });
  });

  it('reports a SQLite file in a missing directory as unavailable', async () => {
    await assert.rejects(openMemory('/nonexistent-dir/witness.db'), (error: unknown) => {
      assert.ok(error instanceof MemoryUnavailableError);
      assert.match(error.message, /\/nonexistent-dir\/witness\.db/);
      return true;
    });
  });

  it('reports an unreachable PostgreSQL server as unavailable, without its password', async () => {
    const port = await closedPort();
    await assert.rejects(
      openMemory(`postgres://witness:s3cret@127.0.0.1:${port}/witness`, { busyTimeoutMs: 2_000 }),
      (error: unknown) => {
        assert.ok(error instanceof MemoryUnavailableError);
        assert.match(error.message, /PostgreSQL/);
        assert.doesNotMatch(error.message, /s3cret/);
        return true;
      },
    );
  });

  it('redacts the password of a URL', () => {
    assert.equal(redactUrl('postgres://u:p@h:5432/db'), 'postgres://u:***@h:5432/db');
    assert.equal(redactUrl('postgres://u@h/db'), 'postgres://u@h/db');
  });
});

schemaVersionSuite(sqliteBackend);

/** A TCP port on 127.0.0.1 that nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}
