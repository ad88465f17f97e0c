import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import type { AcquireOutcome } from '../../../src/sources/local-file/acquire-sync.js';
import { acquisitionPool, type PoolJob } from '../../../src/sources/local-file/acquisition-pool.js';
import { createMailboxBuffer, JobMailbox } from '../../../src/sources/local-file/job-mailbox.js';
import { DEFAULT_LIMITS } from '../../../src/sources/local-file/limits.js';
import { LocalFileSurfaceSource, releaseAcquisitionThreads } from '../../../src/sources/local-file-source.js';
import { SOURCE_MODULE, writeChildScript } from '../support/child-process.js';
import { buildTree, removeDir, tempDir, textEntry } from '../support/trees.js';

/**
 * The pool threads' mailbox (job-mailbox.ts): a thread lingers for a moment after each job, and an exact job
 * given meanwhile is written into shared memory instead of posted. A job is delivered or posted, never both
 * and never lost; it reads exactly what was given; and a delivered job is cancelled through the mailbox's flag,
 * which belongs to that job only.
 */

/** A thread watching `buffer` for `lingerMs` after each reply, echoing every delivered job back. */
function echoThread(buffer: SharedArrayBuffer, lingerMs: number): Worker {
  const mailboxModule = new URL('../../../src/sources/local-file/job-mailbox.js', import.meta.url).href;
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    import(workerData.mailboxModule).then(({ MailboxWatch }) => {
      const watch = new MailboxWatch(workerData.buffer);
      parentPort.on('message', (message) => {
        watch.received();
        watch.linger({ posted: message }, (reply) => parentPort.postMessage(reply),
          (job) => ({ delivered: job, cancelled: watch.cancelled() }), workerData.lingerMs);
      });
      parentPort.postMessage('ready');
    });`;
  return new Worker(code, { eval: true, workerData: { buffer, lingerMs, mailboxModule } });
}

function nextMessage(worker: Worker): Promise<unknown> {
  return new Promise((resolve) => worker.once('message', resolve));
}

describe('a pool thread’s mailbox', () => {
  it('takes each job delivered while the thread lingers, exactly as given, and refuses it once mail came', async () => {
    const buffer = createMailboxBuffer();
    const mailbox = new JobMailbox(buffer);
    const thread = echoThread(buffer, 60_000);
    try {
      assert.equal(await nextMessage(thread), 'ready');
      // Not lingering yet (the thread waits in its event loop): the mailbox refuses, the job is posted.
      assert.equal(mailbox.deliver({ n: 0 }), false);
      mailbox.mail();
      const firstReply = nextMessage(thread);
      thread.postMessage({ n: 0 });
      assert.deepEqual(await firstReply, { posted: { n: 0 } });
      // Lingering now (for a minute): every job delivered is taken, and the text survives JSON exactly, lone
      // surrogates and all.
      const jobs = [
        { id: 1, uri: '/a/b.txt', limits: { ...DEFAULT_LIMITS } },
        { id: 2, uri: '/caf\u00e9/\ud83d\ude00/\ud800 lone', root: '/tmp/\u0000x' },
        { id: 3, uri: `/${'x'.repeat(4000)}` },
      ];
      for (const job of jobs) {
        const reply = nextMessage(thread);
        // The thread opens the mailbox just before its reply leaves, so it can be delivered to as soon as the
        // reply is here.
        assert.equal(mailbox.deliver(job), true);
        assert.deepEqual(await reply, { delivered: job, cancelled: false });
      }
      assert.equal(mailbox.delivered, 3);
      // A job too long for the mailbox, or not plain data, is refused (and would be posted); the mailbox stays
      // open for the next one.
      assert.equal(mailbox.deliver({ uri: 'x'.repeat(16 * 1024) }), false);
      assert.equal(mailbox.deliver({ size: 1n }), false);
      // A raised flag is cleared by the next job delivered: it belonged to the job before.
      mailbox.cancel();
      const cleared = nextMessage(thread);
      assert.equal(mailbox.deliver({ id: 4 }), true);
      assert.deepEqual(await cleared, { delivered: { id: 4 }, cancelled: false });
      // Mail sends a lingering thread back to its event loop: the posted job is answered there, once.
      mailbox.mail();
      const posted = nextMessage(thread);
      thread.postMessage({ n: 5 });
      assert.deepEqual(await posted, { posted: { n: 5 } });
    } finally {
      await thread.terminate();
    }
  });

  it('gives its core back: a thread that lingered in vain refuses the mailbox', async () => {
    const buffer = createMailboxBuffer();
    const mailbox = new JobMailbox(buffer);
    const thread = echoThread(buffer, 5);
    try {
      assert.equal(await nextMessage(thread), 'ready');
      mailbox.mail();
      const reply = nextMessage(thread);
      thread.postMessage({ n: 1 });
      await reply;
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal(mailbox.deliver({ n: 2 }), false);
      assert.equal(mailbox.delivered, 0);
    } finally {
      await thread.terminate();
    }
  });
});

describe('exact acquisitions through the mailbox', () => {
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

  /** Submits `uri` from inside the previous job's answer (when the thread lingers) until it is delivered. */
  async function submitThroughMailbox(
    uri: string,
    onStarted: (cancel: () => void) => void,
  ): Promise<AcquireOutcome> {
    for (let attempt = 0; attempt < 2000; attempt++) {
      const outcome = await new Promise<AcquireOutcome | undefined>((resolve, reject) => {
        acquisitionPool.submit(exactJob('/a/one.txt'), {
          onEntries: () => {},
          onFailure: reject,
          onDone: () => {
            const deliveredBefore = acquisitionPool.mailboxJobs;
            const ticket = acquisitionPool.submit(exactJob(uri), {
              onEntries: () => {},
              onFailure: reject,
              onDone: (done) => resolve(delivered ? done : undefined),
            });
            const delivered = acquisitionPool.mailboxJobs === deliveredBefore + 1;
            // Posted (the thread had stopped lingering): stopped at once, and tried again.
            if (delivered) onStarted(() => ticket.cancel());
            else ticket.cancel();
          },
        });
      });
      if (outcome !== undefined) return outcome;
    }
    throw new Error('no job was delivered in 2,000 tries');
  }

  it('answer back-to-back exact acquisitions exactly as posted ones', async () => {
    const source = new LocalFileSurfaceSource({ root: dir });
    try {
      const deliveredBefore = acquisitionPool.mailboxJobs;
      // At least 300 calls, and on until one went through the mailbox: on a loaded machine the caller can
      // be kept off its core for longer than a linger now and then (bounded by 20,000 calls).
      for (let i = 0; i < 300 || (acquisitionPool.mailboxJobs === deliveredBefore && i < 20_000); i++) {
        const observation = await source.acquire({
          scorableType: 'surface',
          uri: '/a/two.txt',
          match: 'exact',
        });
        assert.equal(observation.acquisition, 'complete');
        assert.deepEqual(observation.payload.entries, [textEntry('/a/two.txt', 'two')]);
      }
      assert.ok(acquisitionPool.mailboxJobs > deliveredBefore, 'no acquisition went through the mailbox');
    } finally {
      await source.close();
    }
  });

  it('cancels a delivered job mid-read through the mailbox’s flag', async () => {
    const outcome = await submitThroughMailbox('/big.bin', (cancel) => setTimeout(cancel, 20));
    // Only the mailbox's flag can have stopped it: a delivered job never sees the flag of a posted one.
    assert.deepEqual(outcome, { kind: 'cancelled' });
  });

  it('a thread whose jobs are spaced out does not linger after them', async () => {
    for (let round = 0; round < 5; round++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      let deliveredBefore = 0;
      let delivered = 0;
      await new Promise<void>((resolve, reject) => {
        // Twenty milliseconds after the last reply: not back to back, so the thread does not stay awake
        // after it, and the job asked for the moment its reply is here finds the mailbox closed.
        acquisitionPool.submit(exactJob('/a/one.txt'), {
          onEntries: () => {},
          onFailure: reject,
          onDone: () => {
            deliveredBefore = acquisitionPool.mailboxJobs;
            acquisitionPool.submit(exactJob('/a/two.txt'), {
              onEntries: () => {},
              onFailure: reject,
              onDone: () => resolve(),
            });
            delivered = acquisitionPool.mailboxJobs - deliveredBefore;
          },
        });
      });
      assert.equal(delivered, 0, `round ${round}: a job after a spaced-out one was delivered`);
    }
  });

  it('a job submitted already cancelled is posted, and answered cancelled', async () => {
    const submit = (job: PoolJob) =>
      new Promise<AcquireOutcome>((resolve, reject) => {
        acquisitionPool.submit(job, { onEntries: () => {}, onFailure: reject, onDone: resolve });
      });
    let controlsDelivered = 0;
    // At least 20 rounds, and on until a control was delivered (a loaded machine can keep the caller off its
    // core for longer than a linger now and then; bounded by 1,000 rounds).
    for (let attempt = 0; attempt < 20 || (controlsDelivered === 0 && attempt < 1000); attempt++) {
      // Two jobs back to back, so the thread lingers after the second; then one already cancelled, then
      // (its control) one that is not, each asked for the moment the previous answer is here.
      await submit(exactJob('/a/one.txt'));
      await submit(exactJob('/a/one.txt'));
      const cancelled = exactJob('/a/two.txt');
      Atomics.store(new Int32Array(cancelled.cancel), 0, 1);
      const deliveredBefore = acquisitionPool.mailboxJobs;
      assert.deepEqual(await submit(cancelled), { kind: 'cancelled' });
      assert.equal(acquisitionPool.mailboxJobs, deliveredBefore, 'a job already cancelled was delivered');
      const controlBefore = acquisitionPool.mailboxJobs;
      const control = await submit(exactJob('/a/two.txt'));
      assert.equal(control.kind, 'done');
      controlsDelivered += acquisitionPool.mailboxJobs - controlBefore;
    }
    // The thread was lingering when the cancelled jobs came: the controls in their place were delivered.
    assert.ok(
      controlsDelivered > 0,
      'no control job was delivered: the test did not reach a lingering thread',
    );
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
process.stdout.write(JSON.stringify({ poolSize: POOL_SIZE, delivered: acquisitionPool.mailboxJobs, read }));
`,
    );
    const child = spawnSync('taskset', ['-c', '0', process.execPath, script, dir], { encoding: 'utf8' });
    assert.equal(child.status, 0, child.stderr);
    assert.deepEqual(JSON.parse(child.stdout), { poolSize: 1, delivered: 0, read: 200 });
    assert.ok(SOURCE_MODULE.endsWith('/local-file-source.js'));
  });

  it('a late cancel of a finished delivered job cancels nothing after it', async () => {
    let late: (() => void) | undefined;
    const first = await submitThroughMailbox('/a/one.txt', (cancel) => {
      late = cancel;
    });
    assert.equal(first.kind, 'done');
    // The first job's cancel, called just as the next delivered job starts: the mailbox's flag is that job's now.
    const next = await submitThroughMailbox('/mid.bin', () => (late as () => void)());
    assert.equal(next.kind, 'done');
    assert.equal(next.kind === 'done' && next.result.entries.length, 1);
  });
});
