import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { demoArchive, writeCopiedArchive } from '../support/copied-archive.js';
import { postgresBackend } from './support/backends.js';

/**
 * `witness export` and `witness import` of a memory of thousands of attempts, each in a child process
 * whose JavaScript heap is smaller than the archive: both must stream (a page of records, a line at a
 * time), and a round trip must be lossless. The export's reader is paused at first, so an export that
 * did not wait for its reader would queue the whole archive in its heap.
 */

const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
/** The children's heap (MiB): under the archive's size (about 30 MiB), and its parsed records' (twice that). */
const HEAP_MIB = 32;
/**
 * The children's young generation (MiB per semi-space). `--max-old-space-size` alone no longer bounds the
 * heap on Node 24: its V8 sizes the young generation apart (a heap limit of 224 MiB beside Node 20's 80;
 * the import's young generation grew to 64 MiB, twice Node 20's). A full collection promotes what its marking found reachable in
 * that young generation, so on a loaded machine (marking slowed for lack of CPU) it promoted megabytes of
 * records already done with into the 32 MiB old generation and the child died "Reached heap limit",
 * though the import itself never held more than about 20 MiB (the modules it loads; no record stays).
 * 8 MiB keeps both Node lines' whole heap near Node 20's: the test bounds all of it, as it means to.
 */
const SEMI_SPACE_MIB = 8;
/** Copies of the demo run (DEMO_ATTEMPTS = 8 attempts each): 2,000 attempts, about 16,000 records. */
const COPIES = 250;
/** On PostgreSQL: 400 attempts, about 3,000 records. */
const PG_COPIES = 50;

interface Child {
  status: number | null;
  stderr: string;
}

/** Runs the CLI with a small heap; stdout goes to `out` (read only after `pauseMs`) when given. */
async function cli(args: string[], out?: string, pauseMs = 0): Promise<Child> {
  const heap = [`--max-old-space-size=${HEAP_MIB}`, `--max-semi-space-size=${SEMI_SPACE_MIB}`];
  const child = spawn(process.execPath, [...heap, CLI, ...args], {
    stdio: ['ignore', out === undefined ? 'ignore' : 'pipe', 'pipe'],
    env: { ...process.env, WITNESS_DB: undefined },
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (text: string) => {
    stderr += text;
  });
  if (out !== undefined && child.stdout !== null) {
    const stdout = child.stdout;
    stdout.pause();
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
    stdout.pipe(createWriteStream(out));
  }
  const [status] = (await once(child, 'close')) as [number | null];
  return { status, stderr };
}

async function sortedBody(file: string): Promise<{ body: string[]; end: string }> {
  const lines: string[] = [];
  for await (const line of createInterface({ input: createReadStream(file) })) lines.push(line);
  return { body: lines.slice(1, -1).sort(), end: lines.at(-1) as string };
}

describe('witness export and import of thousands of attempts, in a small heap', {
  timeout: 1_800_000,
}, () => {
  let dir: string;
  let large: string;
  let demo: string[];

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'witness-archive-scale-'));
    demo = await demoArchive(path.join(dir, 'demo.db'), dir);
    large = path.join(dir, 'large.jsonl');
    await writeCopiedArchive(demo, large, COPIES);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('imports into SQLite and exports back every record, losslessly', async () => {
    assert.ok(statSync(large).size > HEAP_MIB * 1024 * 1024 * 0.8, `${statSync(large).size} bytes`);
    const db = path.join(dir, 'a.db');
    const imported = await cli(['import', large, '--db', db]);
    assert.equal(imported.status, 0, imported.stderr);
    assert.match(imported.stderr, /^$/);
    const exported = path.join(dir, 'a.jsonl');
    const result = await cli(['export', '--db', db], exported, 3_000);
    assert.equal(result.status, 0, result.stderr);
    const original = await sortedBody(large);
    const back = await sortedBody(exported);
    assert.equal(back.end, original.end);
    assert.equal(back.body.length, original.body.length);
    assert.ok(back.body.length > 15_000, `${back.body.length} records`);
    assert.deepEqual(back.body, original.body);
    assert.ok(
      (JSON.parse(back.end) as { records: { attack_result: number } }).records.attack_result >= 2_000,
    );
  });

  it('imports into PostgreSQL and exports back every record, losslessly', {
    skip: postgresBackend.skip,
  }, async () => {
    // Fewer attempts than on SQLite: each record costs PostgreSQL several round trips in the one
    // transaction, and the point here is the same streaming on the other backend, not its throughput.
    const smaller = path.join(dir, 'smaller.jsonl');
    await writeCopiedArchive(demo, smaller, PG_COPIES);
    const database = await postgresBackend.fresh();
    try {
      const imported = await cli(['import', smaller, '--db', database.target]);
      assert.equal(imported.status, 0, imported.stderr);
      const out = path.join(dir, 'pg.jsonl');
      const result = await cli(['export', '--db', database.target], out, 3_000);
      assert.equal(result.status, 0, result.stderr);
      const original = await sortedBody(smaller);
      const back = await sortedBody(out);
      assert.equal(back.end, original.end);
      assert.deepEqual(back.body, original.body);
    } finally {
      await database.cleanup();
    }
  });
});
