import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import type { AcquireOutcome } from '../../../src/sources/local-file/acquire-sync.js';
import { acquisitionPool, type PoolJob } from '../../../src/sources/local-file/acquisition-pool.js';
import { createBellBuffer, JobBell } from '../../../src/sources/local-file/job-bell.js';
import { DEFAULT_LIMITS } from '../../../src/sources/local-file/limits.js';
import { LocalFileSurfaceSource, releaseAcquisitionThreads } from '../../../src/sources/local-file-source.js';
import { SOURCE_MODULE, writeChildScript } from '../support/child-process.js';
import { buildTree, removeDir, tempDir, textEntry } from '../support/trees.js';

/**
 * The pool threads' bell (job-bell.ts): a thread lingers for a moment after each job, and an exact job
 * given meanwhile is written into shared memory instead of posted. A job is rung or posted, never both
 * and never lost; it reads exactly what was given; and a rung job is cancelled through the bell's flag,
 * which belongs to that job only.
 */

/** A thread watching `buffer` for `lingerMs` after each reply, echoing every rung job back. */
function echoThread(buffer: SharedArrayBuffer, lingerMs: number): Worker {
  const bellModule = new URL('../../../src/sources/local-file/job-bell.js', import.meta.url).href;
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    import(workerData.bellModule).then(({ BellWatch }) => {
      const watch = new BellWatch(workerData.buffer);
      parentPort.on('message', (message) => {
        watch.received();
        watch.linger({ posted: message }, (reply) => parentPort.postMessage(reply),
          (job) => ({ rung: job, cancelled: watch.cancelled() }), workerData.lingerMs);
      });
      parentPort.postMessage('ready');
    });`;
  return new Worker(code, { eval: true, workerData: { buffer, lingerMs, bellModule } });
}

function nextMessage(worker: Worker): Promise<unknown> {
  return new Promise((resolve) => worker.once('message', resolve));
}

describe('a pool thread’s bell', () => {
  it('takes each job rung while the thread lingers, exactly as given, and refuses it once mail came', async () => {
    const buffer = createBellBuffer();
    const bell = new JobBell(buffer);
    const thread = echoThread(buffer, 60_000);
    try {
      assert.equal(await nextMessage(thread), 'ready');
      // Not lingering yet (the thread waits in its event loop): the bell refuses, the job is posted.
      assert.equal(bell.ring({ n: 0 }), false);
      bell.mail();
      const firstReply = nextMessage(thread);
      thread.postMessage({ n: 0 });
      assert.deepEqual(await firstReply, { posted: { n: 0 } });
      // Lingering now (for a minute): every job rung is taken, and the text survives JSON exactly, lone
      // surrogates and all.
      const jobs = [
        { id: 1, uri: '/a/b.txt', limits: { ...DEFAULT_LIMITS } },
        { id: 2, uri: '/caf\u00e9/\ud83d\ude00/\ud800 lone', root: '/tmp/\u0000x' },
        { id: 3, uri: `/${'x'.repeat(4000)}` },
      ];
      for (const job of jobs) {
        const reply = nextMessage(thread);
        // The thread opens the bell just before its reply leaves, so it can be rung as soon as the
        // reply is here.
        assert.equal(bell.ring(job), true);
        assert.deepEqual(await reply, { rung: job, cancelled: false });
      }
      assert.equal(bell.rung, 3);
      // A job too long for the bell, or not plain data, is refused (and would be posted); the bell stays
      // open for the next one.
      assert.equal(bell.ring({ uri: 'x'.repeat(16 * 1024) }), false);
      assert.equal(bell.ring({ size: 1n }), false);
      // A raised flag is cleared by the next job rung: it belonged to the job before.
      bell.cancel();
      const cleared = nextMessage(thread);
      assert.equal(bell.ring({ id: 4 }), true);
      assert.deepEqual(await cleared, { rung: { id: 4 }, cancelled: false });
      // Mail sends a lingering thread back to its event loop: the posted job is answered there, once.
      bell.mail();
      const posted = nextMessage(thread);
      thread.postMessage({ n: 5 });
      assert.deepEqual(await posted, { posted: { n: 5 } });
    } finally {
      await thread.terminate();
    }
  });

  it('gives its core back: a thread that lingered in vain refuses the bell', async () => {
    const buffer = createBellBuffer();
    const bell = new JobBell(buffer);
    const thread = echoThread(buffer, 5);
    try {
      assert.equal(await nextMessage(thread), 'ready');
      bell.mail();
      const reply = nextMessage(thread);
      thread.postMessage({ n: 1 });
      await reply;
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal(bell.ring({ n: 2 }), false);
      assert.equal(bell.rung, 0);
    } finally {
      await thread.terminate();
    }
  });
});

describe('exact acquisitions through the bell', () => {
  let dir: string;
  before(() => {
    dir = tempDir();
    buildTree(dir, { a: { dir: { 'one.txt': 'one', 'two.txt': 'two' } } });
    // Sparse files: reading and hashing 1 GiB takes far longer than the test lets it run; 64 MiB takes
    // long enough that a flag raised as it starts would stop it.
    for (const [name, size] of [
      ['big.bin', 1024 ** 3],
      ['mid.bin', 64 * 1024 ** 2],
    ] as const) {
      const fd = fs.openSync(path.join(dir, name), 'w');
      fs.ftruncateSync(fd, size);
      fs.closeSync(fd);
    }
  });
  after(async () => {
    await releaseAcquisitionThreads();
    removeDir(dir);
  });

  const exactJob = (uri: string): PoolJob => ({
    request: { root: dir, uri, match: 'exact', limits: { ...DEFAULT_LIMITS, maxReadBytes: 1024 ** 3 } },
    cancel: new SharedArrayBuffer(4),
    surfaceFs: 'auto',
  });

  /** Submits `uri` from inside the previous job's answer (when the thread lingers) until it is rung. */
  async function submitRung(uri: string, onStarted: (cancel: () => void) => void): Promise<AcquireOutcome> {
    for (let attempt = 0; attempt < 2000; attempt++) {
      const outcome = await new Promise<AcquireOutcome | undefined>((resolve, reject) => {
        acquisitionPool.submit(exactJob('/a/one.txt'), {
          onEntries: () => {},
          onFailure: reject,
          onDone: () => {
            const rungBefore = acquisitionPool.rungJobs;
            const ticket = acquisitionPool.submit(exactJob(uri), {
              onEntries: () => {},
              onFailure: reject,
              onDone: (done) => resolve(rung ? done : undefined),
            });
            const rung = acquisitionPool.rungJobs === rungBefore + 1;
            // Posted (the thread had stopped lingering): stopped at once, and tried again.
            if (rung) onStarted(() => ticket.cancel());
            else ticket.cancel();
          },
        });
      });
      if (outcome !== undefined) return outcome;
    }
    throw new Error('no job was rung in 2,000 tries');
  }

  it('answer back-to-back exact acquisitions exactly as posted ones', async () => {
    const source = new LocalFileSurfaceSource({ root: dir });
    try {
      const rungBefore = acquisitionPool.rungJobs;
      // At least 300 calls, and on until one went through the bell: on a loaded machine the caller can
      // be kept off its core for longer than a linger now and then (bounded by 20,000 calls).
      for (let i = 0; i < 300 || (acquisitionPool.rungJobs === rungBefore && i < 20_000); i++) {
        const observation = await source.acquire({
          scorableType: 'surface',
          uri: '/a/two.txt',
          match: 'exact',
        });
        assert.equal(observation.acquisition, 'complete');
        assert.deepEqual(observation.payload.entries, [textEntry('/a/two.txt', 'two')]);
      }
      assert.ok(acquisitionPool.rungJobs > rungBefore, 'no acquisition went through the bell');
    } finally {
      await source.close();
    }
  });

  it('cancels a rung job mid-read through the bell’s flag', async () => {
    const outcome = await submitRung('/big.bin', (cancel) => setTimeout(cancel, 20));
    // Only the bell's flag can have stopped it: a rung job never sees the flag of a posted one.
    assert.deepEqual(outcome, { kind: 'cancelled' });
  });

  it('a thread whose jobs are spaced out does not linger after them', async () => {
    for (let round = 0; round < 5; round++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      let rungBefore = 0;
      let rung = 0;
      await new Promise<void>((resolve, reject) => {
        // Twenty milliseconds after the last reply: not back to back, so the thread does not stay awake
        // after it, and the job asked for the moment its reply is here finds the bell closed.
        acquisitionPool.submit(exactJob('/a/one.txt'), {
          onEntries: () => {},
          onFailure: reject,
          onDone: () => {
            rungBefore = acquisitionPool.rungJobs;
            acquisitionPool.submit(exactJob('/a/two.txt'), {
              onEntries: () => {},
              onFailure: reject,
              onDone: () => resolve(),
            });
            rung = acquisitionPool.rungJobs - rungBefore;
          },
        });
      });
      assert.equal(rung, 0, `round ${round}: a job after a spaced-out one was rung`);
    }
  });

  it('a job submitted already cancelled is posted, and answered cancelled', async () => {
    const submit = (job: PoolJob) =>
      new Promise<AcquireOutcome>((resolve, reject) => {
        acquisitionPool.submit(job, { onEntries: () => {}, onFailure: reject, onDone: resolve });
      });
    let controlsRung = 0;
    // At least 20 rounds, and on until a control was rung (a loaded machine can keep the caller off its
    // core for longer than a linger now and then; bounded by 1,000 rounds).
    for (let attempt = 0; attempt < 20 || (controlsRung === 0 && attempt < 1000); attempt++) {
      // Two jobs back to back, so the thread lingers after the second; then one already cancelled, then
      // (its control) one that is not, each asked for the moment the previous answer is here.
      await submit(exactJob('/a/one.txt'));
      await submit(exactJob('/a/one.txt'));
      const cancelled = exactJob('/a/two.txt');
      Atomics.store(new Int32Array(cancelled.cancel), 0, 1);
      const rungBefore = acquisitionPool.rungJobs;
      assert.deepEqual(await submit(cancelled), { kind: 'cancelled' });
      assert.equal(acquisitionPool.rungJobs, rungBefore, 'a job already cancelled was rung');
      const controlBefore = acquisitionPool.rungJobs;
      const control = await submit(exactJob('/a/two.txt'));
      assert.equal(control.kind, 'done');
      controlsRung += acquisitionPool.rungJobs - controlBefore;
    }
    // The thread was lingering when the cancelled jobs came: the controls in their place were rung.
    assert.ok(controlsRung > 0, 'no control job was rung: the test did not reach a lingering thread');
  });

  it('a process on a single core rings nothing: its threads do not linger', () => {
    const script = writeChildScript(
      dir,
      'single-core.mjs',
      `import { LocalFileSurfaceSource } from '{{SOURCE}}';
const { acquisitionPool, POOL_SIZE } = await import(new URL('./local-file/acquisition-pool.js', '{{SOURCE}}').href);
const source = new LocalFileSurfaceSource({ root: process.argv[2] });
let read = 0;
for (let i = 0; i < 200; i++) {
  const observation = await source.acquire({ scorableType: 'surface', uri: '/a/one.txt', match: 'exact' });
  read += observation.payload.entries.length;
}
await source.close();
process.stdout.write(JSON.stringify({ poolSize: POOL_SIZE, rung: acquisitionPool.rungJobs, read }));
`,
    );
    const child = spawnSync('taskset', ['-c', '0', process.execPath, script, dir], { encoding: 'utf8' });
    assert.equal(child.status, 0, child.stderr);
    assert.deepEqual(JSON.parse(child.stdout), { poolSize: 1, rung: 0, read: 200 });
    assert.ok(SOURCE_MODULE.endsWith('/local-file-source.js'));
  });

  it('a late cancel of a finished rung job cancels nothing after it', async () => {
    let late: (() => void) | undefined;
    const first = await submitRung('/a/one.txt', (cancel) => {
      late = cancel;
    });
    assert.equal(first.kind, 'done');
    // The first job's cancel, called just as the next rung job starts: the bell's flag is that job's now.
    const next = await submitRung('/mid.bin', () => (late as () => void)());
    assert.equal(next.kind, 'done');
    assert.equal(next.kind === 'done' && next.result.entries.length, 1);
  });
});
