import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { InvalidOptionError, MemoryUnavailableError, SchemaTooNewError } from '../../src/errors.js';
import { openMemoryReader } from '../../src/memory/memory-reader.js';
import { openMemory } from '../../src/memory/open-memory.js';
import { fileState } from '../view/support.js';
import { postgresBackend } from './support/backends.js';

describe('openMemoryReader (SQLite)', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'witness-reader-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses a missing file without creating it, and names the fix', async () => {
    const missing = join(dir, 'missing.db');
    await assert.rejects(openMemoryReader(missing), (error: unknown) => {
      assert.ok(error instanceof MemoryUnavailableError);
      assert.match(error.message, /there is no database at .*missing\.db.*witness run/);
      return true;
    });
    assert.deepEqual(await readdir(dir), []);
  });

  it('refuses targets that hold nothing to read', async () => {
    for (const target of ['', ':memory:', 'file:x.db?mode=ro', 'mysql://host/db']) {
      await assert.rejects(openMemoryReader(target), InvalidOptionError, target);
    }
  });

  it('refuses a SQLite file that is not a Witness memory, leaving it as it was', async () => {
    const other = join(dir, 'other.db');
    const db = new Database(other);
    db.exec('create table notes (text)');
    db.close();
    const before = await fileState(other, dir);
    await assert.rejects(openMemoryReader(other), /is not a Witness memory/);
    assert.deepEqual(await fileState(other, dir), before);
    const older = join(dir, 'older.db');
    const newer = join(dir, 'newer.db');
    for (const [file, version] of [
      [older, 1],
      [newer, 99],
    ] as const) {
      const raw = new Database(file);
      raw.exec('create table witness_schema (id integer primary key, version integer, migrated_at text)');
      raw.prepare("insert into witness_schema values (1, ?, '2026-01-01T00:00:00.000Z')").run(version);
      raw.close();
    }
    await assert.rejects(
      openMemoryReader(older),
      /written by an older Witness \(memory schema version 1, current \d+\); reading never migrates: .*which upgrades it/,
    );
    await assert.rejects(openMemoryReader(newer), SchemaTooNewError);
    const text = join(dir, 'notes.txt');
    writeFileSync(text, 'not a database at all, just some text that is long enough to be a header');
    await assert.rejects(openMemoryReader(text), MemoryUnavailableError);
  });

  it('reads without creating -wal or -shm, sees what a writer stores while it is open and after it closes', async () => {
    const file = join(dir, 'live.db');
    const seed = await openMemory(file);
    const first = await seed.createConversation({ labels: { n: '1' } });
    await seed.close();
    const reader = await openMemoryReader(file);
    try {
      const before = await fileState(file, dir);
      assert.equal(existsSync(`${file}-wal`), false);
      assert.deepEqual((await reader.read((memory) => memory.getConversation(first.id))).labels, { n: '1' });
      assert.deepEqual(await fileState(file, dir), before, 'a read of a closed database changes nothing');

      // A writer opens (its -wal exists): reads go to the file in place and see each commit.
      const writer = await openMemory(file);
      const second = await writer.createConversation({ labels: { n: '2' } });
      assert.deepEqual((await reader.read((memory) => memory.getConversation(second.id))).labels, { n: '2' });
      await assert.rejects(
        reader.read((memory) => memory.createConversation()),
        /readonly|read-only/i,
      );
      const third = await writer.createConversation({ labels: { n: '3' } });
      assert.deepEqual((await reader.read((memory) => memory.getConversation(third.id))).labels, { n: '3' });
      await writer.close();
      // The writer was the last connection (the reader holds none between reads): it removed its files.
      assert.equal(existsSync(`${file}-wal`), false);
      assert.equal(existsSync(`${file}-shm`), false);

      // Back to private copies, refreshed because the file changed.
      assert.deepEqual((await reader.read((memory) => memory.getConversation(third.id))).labels, { n: '3' });
      const again = await openMemory(file);
      const fourth = await again.createConversation({ labels: { n: '4' } });
      await again.close();
      assert.deepEqual((await reader.read((memory) => memory.getConversation(fourth.id))).labels, { n: '4' });
      const settled = await fileState(file, dir);
      await assert.rejects(
        reader.read((memory) => memory.createConversation()),
        /readonly|read-only/i,
      );
      assert.deepEqual(await fileState(file, dir), settled, 'a refused write leaves the file as it was');
    } finally {
      await reader.close();
    }
  });
});

describe('openMemoryReader (PostgreSQL)', { skip: postgresBackend.skip }, () => {
  it('reads in read-only sessions: a write fails in the server', async () => {
    const database = await postgresBackend.fresh();
    try {
      const writer = await openMemory(database.target);
      const stored = await writer.createConversation({ labels: { n: '1' } });
      const reader = await openMemoryReader(database.target);
      try {
        assert.deepEqual((await reader.read((memory) => memory.getConversation(stored.id))).labels, {
          n: '1',
        });
        const later = await writer.createConversation({ labels: { n: '2' } });
        assert.deepEqual((await reader.read((memory) => memory.getConversation(later.id))).labels, {
          n: '2',
        });
        await assert.rejects(
          reader.read((memory) => memory.createConversation()),
          /read-only transaction/,
        );
        const rows = await database.query('select count(*)::int as n from conversations');
        assert.deepEqual(rows, [{ n: 2 }]);
      } finally {
        await reader.close();
        await writer.close();
      }
    } finally {
      await database.cleanup();
    }
  });

  it('refuses a PostgreSQL database without a Witness memory, creating nothing in it', async () => {
    const database = await postgresBackend.fresh();
    try {
      await assert.rejects(openMemoryReader(database.target), /is not a Witness memory/);
      const tables = await database.query(
        "select table_name from information_schema.tables where table_schema = 'public'",
      );
      assert.deepEqual(tables, []);
    } finally {
      await database.cleanup();
    }
  });
});
