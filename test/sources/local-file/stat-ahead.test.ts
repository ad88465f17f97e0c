import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import type { EntryStat } from '../../../src/sources/confined-fs/file-stat.js';
import { loadStatx } from '../../../src/sources/confined-fs/statx.js';
import { type StatAhead, type StatAt, StatRequest } from '../../../src/sources/local-file/stat-ahead.js';
import { mkfifo, removeDir, tempDir } from '../support/trees.js';

/**
 * Stats taken ahead for a carrying manifest (stat-ahead.ts): the walker and the second reader share one
 * directory's names through a StatRequest. Whoever stats a name, its answer must be the walker's own
 * statx of it (one name, never following a link); every name is answered exactly once; and the walker
 * returns only when no name claimed by a live reader is unanswered — so a reader that comes late never
 * touches the directory handle.
 */

const statxAt = loadStatx();
const noCancel = () => {};
const skip = statxAt === undefined ? 'statx cannot be loaded here' : false;

/** The numbers a stat answer is compared by (an error by its code). */
function shape(answer: StatAhead): unknown {
  if (answer instanceof Error) return { code: (answer as { code?: string }).code };
  const { dev, ino, size, mode, mtimeMs, ctimeMs } = answer;
  return { dev, ino, size, mode, mtimeMs, ctimeMs, link: answer.isSymbolicLink(), dir: answer.isDirectory() };
}

describe('StatRequest: the names of one directory, statted by two threads', { skip }, () => {
  let base: string;
  let root: string;
  let dirFd: number;
  let names: Buffer[];
  /** The walker's own answer for each name, one statx at a time. */
  let reference: unknown[];
  const statAt = (() => statxAt) as () => StatAt;

  before(() => {
    base = tempDir('witness-stat-ahead-');
    root = path.join(base, 'ws');
    fs.mkdirSync(root);
    fs.writeFileSync(path.join(base, 'outside.txt'), 'OUTSIDE, much longer than any name here');
    for (let i = 0; i < 30; i++)
      fs.writeFileSync(path.join(root, `f${String(i).padStart(2, '0')}`), 'x'.repeat(i));
    fs.mkdirSync(path.join(root, 'sub'));
    // A link to a file outside the root: answered as the link itself, never as its target.
    fs.symlinkSync(path.join(base, 'outside.txt'), path.join(root, 'link'));
    fs.symlinkSync('nowhere', path.join(root, 'dangling'));
    mkfifo(path.join(root, 'fifo'));
    dirFd = fs.openSync(root, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
    names = [...fs.readdirSync(root), 'missing'].sort().map((name) => Buffer.from(name));
    reference = names.map((name) => {
      try {
        return shape(statAt()(dirFd, name));
      } catch (error) {
        return shape(error as Error);
      }
    });
  });
  after(() => {
    fs.closeSync(dirFd);
    removeDir(base);
  });

  it('the walker alone (no reader came) answers every name as its own statx does', () => {
    const request = StatRequest.create(dirFd, names);
    const { answers, byReader } = request.collect(statAt(), () => false, noCancel);
    assert.equal(byReader, 0);
    assert.deepEqual(answers.map(shape), reference);
    const link = answers[names.findIndex((name) => name.toString() === 'link')] as EntryStat;
    assert.ok(link.isSymbolicLink(), 'a link is answered as the link, not its target outside the root');
    assert.notEqual(link.ino, fs.statSync(path.join(base, 'outside.txt')).ino);
    const missing = answers[names.findIndex((name) => name.toString() === 'missing')];
    assert.equal((missing as { code?: string }).code, 'ENOENT');
  });

  it('a reader that claims first, then stops (cancelled): each name answered once, the same answers', () => {
    const request = StatRequest.create(dirFd, names);
    const seen: string[] = [];
    let served = 0;
    const answered = request.serve(
      (at, name) => {
        seen.push(name.toString());
        return statAt()(at, name);
      },
      () => served++ >= 7,
    );
    assert.equal(answered, 7);
    const walker: string[] = [];
    const { answers, byReader } = request.collect(
      (at, name) => {
        walker.push(name.toString());
        return statAt()(at, name);
      },
      () => false,
      noCancel,
    );
    assert.equal(byReader, 7);
    assert.deepEqual(answers.map(shape), reference);
    assert.deepEqual(
      [...seen, ...walker].sort(),
      names.map(String).sort(),
      'every name statted exactly once',
    );
  });

  it('a failure without an errno is given back, and the walker stats that name itself', () => {
    const request = StatRequest.create(dirFd, names);
    request.serve(
      () => {
        throw new Error('not a system call error');
      },
      () => false,
    );
    const { answers, byReader } = request.collect(statAt(), () => false, noCancel);
    assert.equal(byReader, 0);
    assert.deepEqual(answers.map(shape), reference);
  });

  it('a name claimed by a reader whose thread was lost is statted by the walker, which does not hang', () => {
    const request = StatRequest.create(dirFd, names);
    // The reader claimed the first name and died before answering it.
    assert.equal(request.claim(), 0);
    const { answers, byReader } = request.collect(statAt(), () => true, noCancel);
    assert.equal(byReader, 0);
    assert.deepEqual(answers.map(shape), reference);
  });

  it('a reader that takes the request after the walker finished touches nothing', () => {
    const request = StatRequest.create(dirFd, names);
    request.collect(statAt(), () => false, noCancel);
    let calls = 0;
    const answered = StatRequest.of(request.shared).serve(
      () => {
        calls++;
        throw new Error('the handle may be closed by now: a late reader must not use it');
      },
      () => false,
    );
    assert.equal(answered, 0);
    assert.equal(calls, 0);
  });

  it('once cancelled, the walker claims no more names, closes the request, and rethrows', () => {
    const request = StatRequest.create(dirFd, names);
    const cancelled = new Error('cancelled');
    let calls = 0;
    assert.throws(
      () =>
        request.collect(
          (at, name) => {
            calls++;
            return statAt()(at, name);
          },
          () => false,
          () => {
            if (calls >= 3) throw cancelled;
          },
        ),
      (error) => error === cancelled,
    );
    assert.equal(calls, 3, 'a cancelled walk stops at once, whatever the directory holds');
    // A reader that takes the request now finds nothing to claim.
    assert.equal(
      StatRequest.of(request.shared).serve(
        () => assert.fail('claimed a name of a closed request'),
        () => false,
      ),
      0,
    );
  });

  it('the walker waits for a name a live reader on another thread still holds (and its handle use)', async () => {
    // The reader takes the first name and stays inside statx for 300 ms; the walker, meanwhile, claims
    // every other name. It must not return before the reader has answered (and left the handle).
    const flags = new Int32Array(new SharedArrayBuffer(8)); // [0]: reader inside statx, [1]: reader out
    const worker = new Worker(
      `const { parentPort } = require('node:worker_threads');
       parentPort.once('message', async ({ module, shared, flags }) => {
         const { StatRequest } = await import(module.stat);
         const { loadStatx } = await import(module.statx);
         const statAt = loadStatx();
         const state = new Int32Array(flags);
         const served = StatRequest.of(shared).serve((dirFd, name) => {
           Atomics.store(state, 0, 1);
           Atomics.notify(state, 0);
           Atomics.wait(state, 1, 0, 300);
           const stat = statAt(dirFd, name);
           Atomics.store(state, 1, 1);
           return stat;
         }, () => Atomics.load(state, 1) === 1);
         parentPort.postMessage(served);
       });`,
      { eval: true },
    );
    try {
      const request = StatRequest.create(dirFd, names);
      const served = new Promise<number>((resolve) => worker.once('message', resolve));
      worker.postMessage({
        module: {
          stat: new URL('../../../src/sources/local-file/stat-ahead.js', import.meta.url).href,
          statx: new URL('../../../src/sources/confined-fs/statx.js', import.meta.url).href,
        },
        shared: request.shared,
        flags: flags.buffer,
      });
      // Wait (off the event loop, as the walker does) until the reader holds its first name.
      while (Atomics.load(flags, 0) === 0) Atomics.wait(flags, 0, 0, 50);
      const { answers, byReader } = request.collect(statAt(), () => false, noCancel);
      assert.equal(Atomics.load(flags, 1), 1, 'collect returned only after the reader answered its name');
      assert.equal(byReader, 1);
      assert.deepEqual(answers.map(shape), reference);
      assert.equal(await served, 1);
    } finally {
      await worker.terminate();
    }
  });
});
