import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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

      // No writer: each read still opens the file in place, and leaves nothing behind.
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
  it('reads the file in place without ever blocking a writer, even in the middle of a read', async () => {
    const file = join(dir, 'busy.db');
    const seed = await openMemory(file);
    const first = await seed.createConversation({ labels: { n: '1' } });
    await seed.close();
    const reader = await openMemoryReader(file);
    try {
      await reader.read(async (memory) => {
        assert.deepEqual((await memory.getConversation(first.id)).labels, { n: '1' });
        // In place: the read holds SQLite's own files beside the database, not a copy somewhere else.
        assert.equal(existsSync(`${file}-wal`), true);
        // A writer that refuses to wait (busy timeout 0) commits while the read is open.
        const writer = new Database(file, { timeout: 0 });
        try {
          writer
            .prepare('insert into conversations (id, created_at, record_json) values (?, ?, ?)')
            .run('written-meanwhile', first.createdAt, JSON.stringify({ ...first, id: 'written-meanwhile' }));
        } finally {
          writer.close();
        }
      });
      assert.equal(
        (await reader.read((memory) => memory.getConversation('written-meanwhile'))).id,
        'written-meanwhile',
      );
      assert.equal(existsSync(`${file}-wal`), false, 'the last connection to close removed the -wal');
      assert.equal(existsSync(`${file}-shm`), false);
    } finally {
      await reader.close();
    }
  });

  it('opens a memory in a directory it may not write, creating nothing there or in its temporary directory', async () => {
    const root = process.getuid?.() === 0;
    if (root && !existsSync('/usr/bin/setpriv')) return; // the check below needs a user that may not write
    const shared = join(dir, 'read-only');
    mkdirSync(shared);
    const file = join(shared, 'memory.db');
    const seed = await openMemory(file);
    const stored = await seed.createConversation({ labels: { n: 'ro' } });
    await seed.close();
    const scratch = join(dir, 'scratch');
    const childTmp = join(scratch, 'tmp');
    mkdirSync(childTmp, { recursive: true });
    for (const path of [dir, shared]) chmodSync(path, 0o755);
    for (const path of [scratch, childTmp]) chmodSync(path, 0o777);
    chmodSync(file, 0o644);
    chmodSync(shared, 0o555);
    const script = join(scratch, 'read.mjs');
    writeFileSync(
      script,
      `import { openMemoryReader } from ${JSON.stringify(new URL('../../src/memory/memory-reader.js', import.meta.url).href)};
const reader = await openMemoryReader(process.argv[2]);
const twice = [];
for (let i = 0; i < 2; i++) twice.push((await reader.read((memory) => memory.getConversation(process.argv[3]))).labels);
await reader.close();
process.stdout.write(JSON.stringify(twice));
`,
    );
    const before = await fileState(file, shared);
    const prefix = root ? ['/usr/bin/setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'] : [];
    const child = spawnSync(
      prefix[0] ?? process.execPath,
      [...prefix.slice(1), ...(root ? [process.execPath] : []), script, file, stored.id],
      {
        env: { ...process.env, TMPDIR: childTmp },
        encoding: 'utf8',
        timeout: 30_000,
      },
    );
    chmodSync(shared, 0o755);
    assert.equal(child.status, 0, child.stderr);
    assert.deepEqual(JSON.parse(child.stdout), [{ n: 'ro' }, { n: 'ro' }]);
    assert.deepEqual(await fileState(file, shared), before);
    assert.deepEqual(await readdir(childTmp), [], 'the private copy is removed when the reader closes');
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
