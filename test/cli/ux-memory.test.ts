import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { boundedLines } from '../../src/cli/bounded-lines.js';
import { InvalidRecordError } from '../../src/errors.js';
import { openMemory } from '../../src/memory/open-memory.js';
import { postgresBackend } from '../memory/support/backends.js';
import { witness } from '../support/in-process-cli.js';
import { makeWorkspace } from '../support/workspace.js';

const dir = mkdtempSync(path.join(tmpdir(), 'witness-ux-memory-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('reading commands never create a memory', () => {
  const missing = path.join(dir, 'witnes.db');
  const observationFile = path.join(dir, 'observation.json');

  before(async () => {
    const root = makeWorkspace({ a: 'x' });
    const observed = await witness(['observe', root, '/a']);
    writeFileSync(observationFile, observed.stdout);
  });

  const commands: [string, string[]][] = [
    ['scores list', ['scores', 'list']],
    ['scores show', ['scores', 'show', 'some-id']],
    ['observations show', ['observations', 'show', 'some-id']],
    ['report', ['report', '--out', path.join(dir, 'r.html')]],
    ['export', ['export']],
    ['replay --score', ['replay', '--score', 'some-id']],
    ['replay FILE --db', ['replay', observationFile]],
  ];
  for (const [name, args] of commands) {
    it(`${name} on a missing --db says "no memory at PATH", exits 2 and creates nothing`, async () => {
      const result = await witness([...args, '--db', missing]);
      assert.equal(result.status, 2, result.stderr);
      assert.equal(result.stdout, '');
      assert.match(
        result.stderr,
        new RegExp(`^witness: no memory at ${missing.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')};`),
      );
      assert.equal(existsSync(missing), false);
      assert.deepEqual(
        readdirSync(dir).filter((name) => name.startsWith('witnes.db')),
        [],
      );
    });
  }

  it('the same through WITNESS_DB', async () => {
    const result = await witness(['scores', 'list'], { env: { WITNESS_DB: missing } });
    assert.equal(result.status, 2);
    assert.equal(existsSync(missing), false);
  });

  it('an empty file that Witness never opened is not a memory either, and stays empty', async () => {
    const empty = path.join(dir, 'empty.db');
    writeFileSync(empty, '');
    const result = await witness(['scores', 'list', '--db', empty]);
    assert.equal(result.status, 2);
    assert.match(result.stderr, /no memory at /);
  });

  it('a PostgreSQL database without Witness tables is left without them', {
    skip: postgresBackend.skip,
  }, async () => {
    const database = await postgresBackend.fresh();
    try {
      const result = await witness(['scores', 'list', '--db', database.target]);
      assert.equal(result.status, 2, result.stderr);
      assert.match(result.stderr, /no memory at postgres/);
      const tables = await database.query(
        "select table_name from information_schema.tables where table_schema = 'public'",
      );
      assert.deepEqual(tables, []);
    } finally {
      await database.cleanup();
    }
  });

  it('a failed import leaves no empty database behind', async () => {
    const bad = path.join(dir, 'bad.jsonl');
    writeFileSync(bad, 'not an export\n');
    const target = path.join(dir, 'imported.db');
    const result = await witness(['import', bad, '--db', target]);
    assert.equal(result.status, 2, result.stderr);
    assert.equal(existsSync(target), false);
    assert.equal(existsSync(`${target}-wal`), false);
  });
});

describe('witness import refuses hostile archives', () => {
  let archive = '';

  before(async () => {
    const db = path.join(dir, 'source.db');
    const root = makeWorkspace({});
    const scored = await witness(['score', root, '/hook', '--contains', 'curl', '--db', db]);
    assert.equal(scored.status, 0, scored.stderr);
    archive = (await witness(['export', '--db', db])).stdout;
  });

  it('imports the honest archive', async () => {
    const file = path.join(dir, 'honest.jsonl');
    writeFileSync(file, archive);
    const result = await witness(['import', file, '--db', path.join(dir, 'honest.db')]);
    assert.equal(result.status, 0, result.stderr);
  });

  it('refuses a complete TRUE score whose own observation proves the file absent, and stores nothing', async () => {
    const forged = archive
      .split('\n')
      .map((line) => {
        if (!line.includes('"recordType":"score"')) return line;
        const entry = JSON.parse(line) as { record: { value: boolean; rationale: string } };
        entry.record.value = true;
        entry.record.rationale = '/hook (exact) holds content containing "curl": proven by "/hook".';
        return JSON.stringify(entry);
      })
      .join('\n');
    const file = path.join(dir, 'forged.jsonl');
    writeFileSync(file, forged);
    const target = path.join(dir, 'forged.db');
    const result = await witness(['import', file, '--db', target]);
    assert.equal(result.status, 2, result.stderr);
    assert.match(
      result.stderr,
      /contradicts its evidence: it says complete TRUE, but observation .* judged again gives complete FALSE/,
    );
    assert.equal(existsSync(target), false);
  });

  it('refuses a line longer than --max-line-bytes with a clear error, naming the line', async () => {
    const file = path.join(dir, 'long.jsonl');
    const [header] = archive.split('\n');
    writeFileSync(file, `${header}\n${'x'.repeat(5_000)}\n`);
    const result = await witness([
      'import',
      file,
      '--max-line-bytes',
      '1000',
      '--db',
      path.join(dir, 'long.db'),
    ]);
    assert.equal(result.status, 2, result.stderr);
    assert.match(result.stderr, /long\.jsonl line 2 is longer than 1000 bytes/);
  });

  it('stops an endless line at the cap instead of buffering it (bounded memory)', async () => {
    let produced = 0;
    const endless = new Readable({
      read() {
        produced += 65_536;
        this.push(Buffer.alloc(65_536, 0x61));
      },
    });
    await assert.rejects(async () => {
      for await (const _line of boundedLines(endless, 1_048_576, 'endless')) {
        // no line ever ends
      }
    }, /endless line 1 is longer than 1048576 bytes/);
    assert.ok(produced < 4 * 1_048_576, `read ${produced} bytes before refusing`);
    endless.destroy();
  });

  it('a stored row whose record_json is not JSON is an InvalidRecordError, not an unexpected failure', async () => {
    const db = path.join(dir, 'corrupt.db');
    const root = makeWorkspace({});
    const scored = await witness(['score', root, '/hook', '--db', db, '--json']);
    const { score } = JSON.parse(scored.stdout) as { score: { id: string } };
    const raw = new Database(db);
    try {
      raw.exec('drop trigger scores_no_update');
      raw.prepare("update scores set record_json = '{not json' where id = ?").run(score.id);
    } finally {
      raw.close();
    }
    const memory = await openMemory(db);
    try {
      await assert.rejects(
        memory.getScore(score.id),
        (error: unknown) => error instanceof InvalidRecordError,
      );
    } finally {
      await memory.close();
    }
    const result = await witness(['scores', 'show', score.id, '--db', db]);
    assert.equal(result.status, 2, result.stderr);
    assert.match(result.stderr, /stored score .*is not JSON/);
    assert.doesNotMatch(result.stderr, /unexpected failure/);
  });
});

describe('what the memory holds, said plainly', () => {
  const db = path.join(dir, 'demo.db');

  before(async () => {
    const result = await witness(['demo', '--db', db, '--report', path.join(dir, 'demo.html')]);
    assert.equal(result.status, 0, result.stderr);
  });

  it('scores list names the campaign, attack and attempt of a message score', async () => {
    const result = await witness(['scores', 'list', '--db', db]);
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /campaign demo-vulnerable \/ attack \S+ \/ attempt 1/);
    assert.doesNotMatch(result.stdout, / message [0-9a-f-]{36}/);
  });

  it('report --campaign nope names the campaigns the memory does hold', async () => {
    const result = await witness([
      'report',
      '--db',
      db,
      '--campaign',
      'nope',
      '--out',
      path.join(dir, 'x.html'),
    ]);
    assert.equal(result.status, 2);
    assert.match(
      result.stderr,
      /no stored run matches campaign "nope" .* it holds 3 run\(s\) of campaign\(s\) "demo-vulnerable", "demo-guarded", "demo-refusing"/,
    );
    assert.doesNotMatch(result.stderr, /run a campaign first|witness run <campaign.yaml>` first/);
  });

  it('the report file was written from the stored runs', () => {
    assert.match(readFileSync(path.join(dir, 'demo.html'), 'utf8'), /Witness report/);
  });
});
