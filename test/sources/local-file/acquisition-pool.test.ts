import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { acquisitionPool, POOL_SIZE } from '../../../src/sources/local-file/acquisition-pool.js';
import { DEFAULT_LIMITS } from '../../../src/sources/local-file/limits.js';
import { LocalFileSurfaceSource, releaseAcquisitionThreads } from '../../../src/sources/local-file-source.js';
import { buildTree, removeDir, tempDir, textEntry } from '../support/trees.js';

/**
 * One bounded pool of acquisition threads per process (issue 14): however many sources and attempts,
 * the process holds at most one acquisition thread per core, jobs queue in order, an abort withdraws a
 * queued job at once, and idle threads can be released.
 */

const surface = (uri: string, match: 'exact' | 'glob' = 'exact') =>
  ({ scorableType: 'surface', uri, match }) as const;

/** Threads of this process, from the kernel (covers every worker and libuv thread). */
function threadCount(): number {
  return fs.readdirSync('/proc/self/task').length;
}

describe('the shared acquisition pool', () => {
  let dir: string;
  before(() => {
    dir = tempDir();
    buildTree(dir, { a: { dir: { 'one.txt': 'one', 'two.txt': 'two' } } });
    // A sparse 256 MiB file: long enough to keep a worker busy while other jobs queue behind it.
    const fd = fs.openSync(path.join(dir, 'big.bin'), 'w');
    fs.ftruncateSync(fd, 256 * 1024 ** 2);
    fs.closeSync(fd);
  });
  after(async () => {
    await releaseAcquisitionThreads();
    removeDir(dir);
  });

  it('200 sources acquiring at once use at most one thread per core, and every result is right', async () => {
    await releaseAcquisitionThreads();
    const threadsBefore = threadCount();
    let peakPool = 0;
    let peakThreads = 0;
    const sample = setInterval(() => {
      peakPool = Math.max(peakPool, acquisitionPool.threads);
      peakThreads = Math.max(peakThreads, threadCount());
    }, 2);
    try {
      const observations = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          new LocalFileSurfaceSource({ root: dir }).acquire(
            i % 2 === 0 ? surface('/a/one.txt') : surface('/a/*.txt', 'glob'),
          ),
        ),
      );
      for (const [i, observation] of observations.entries()) {
        assert.deepEqual(
          observation.payload.entries,
          i % 2 === 0
            ? [textEntry('/a/one.txt', 'one')]
            : [textEntry('/a/one.txt', 'one'), textEntry('/a/two.txt', 'two')],
        );
      }
    } finally {
      clearInterval(sample);
    }
    assert.ok(
      peakPool >= 1 && peakPool <= POOL_SIZE,
      `pool peaked at ${peakPool} threads (cores ${POOL_SIZE})`,
    );
    // Each worker adds its own thread plus a few V8 helper threads; 200 workers would add hundreds.
    assert.ok(
      peakThreads - threadsBefore <= POOL_SIZE * 8,
      `the process grew from ${threadsBefore} to ${peakThreads} threads`,
    );
  });

  it('an abort withdraws a queued acquisition at once, without waiting for the busy threads', async () => {
    const busy = Array.from({ length: POOL_SIZE }, () =>
      new LocalFileSurfaceSource({ root: dir, maxReadBytes: 1024 ** 3 }).acquire(surface('/big.bin')),
    );
    const controller = new AbortController();
    const queued = new LocalFileSurfaceSource({ root: dir }).acquire(surface('/a/one.txt'), {
      signal: controller.signal,
    });
    const reason = new Error('stop waiting');
    controller.abort(reason);
    let settledFirst = 'busy';
    await Promise.race([
      queued.then(
        () => assert.fail('the queued acquisition resolved'),
        (error: unknown) => {
          assert.equal(error, reason);
          settledFirst = 'queued';
        },
      ),
      Promise.all(busy),
    ]);
    assert.equal(settledFirst, 'queued', 'the aborted job waited for the busy ones');
    for (const observation of await Promise.all(busy)) assert.equal(observation.acquisition, 'complete');
  });

  it('close() ends a source’s running acquisition with an error observation; the source stays usable', async () => {
    const source = new LocalFileSurfaceSource({ root: dir, maxReadBytes: 1024 ** 3 });
    const running = source.acquire(surface('/big.bin'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    await source.close();
    const observation = await running;
    assert.equal(observation.acquisition, 'error');
    assert.equal(observation.metadata.error, 'the source was closed during the acquisition');
    const again = await source.acquire(surface('/a/two.txt'));
    assert.deepEqual(again.payload.entries, [textEntry('/a/two.txt', 'two')]);
  });

  it('is idle only when no thread is probing or running a job (what lets `witness score` end at once)', async () => {
    await releaseAcquisitionThreads();
    for (let waited = 0; acquisitionPool.threads > 0 && waited < 20_000; waited += 20) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      await releaseAcquisitionThreads();
    }
    assert.equal(acquisitionPool.threads, 0);
    assert.equal(acquisitionPool.idle, true, 'no thread at all');
    // A prewarmed thread loads koffi and probes at once: until it says so, the pool is not idle (a process
    // ended now would terminate it inside koffi's native code).
    acquisitionPool.prewarm();
    assert.equal(acquisitionPool.idle, false, 'a thread is probing');
    for (let waited = 0; !acquisitionPool.idle && waited < 20_000; waited += 5) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    assert.equal(acquisitionPool.idle, true, 'the probe never ended');
    // A job is on a thread from its submission until its answer has been handled.
    const settled = new Promise<string>((resolve) => {
      acquisitionPool.submit(
        {
          request: { root: dir, uri: '/a/one.txt', match: 'exact', limits: DEFAULT_LIMITS },
          surfaceFs: 'auto',
          cancel: new SharedArrayBuffer(4),
        },
        {
          onEntries: () => {},
          onDone: (outcome) => resolve(`${outcome.kind} ${String(acquisitionPool.idle)}`),
          onFailure: (error) => resolve(`failed: ${error.message}`),
        },
      );
    });
    assert.equal(acquisitionPool.idle, false, 'a job was submitted');
    assert.equal(await settled, 'done true', 'the job is done, and the pool idle when its answer is handled');
  });

  it('releases idle threads on request', async () => {
    await new LocalFileSurfaceSource({ root: dir }).acquire(surface('/a/one.txt'));
    assert.ok(acquisitionPool.threads >= 1, `${acquisitionPool.threads} threads after an acquisition`);
    // The job the test above cancelled may still be stopping on its thread (the worker looks at the flag
    // between chunks; under load that was seen here), and a running thread is left to finish by design:
    // ask again until it is idle too. An idle thread ends on its own only after 60 s, so within these
    // 20 s only the release can empty the pool.
    await releaseAcquisitionThreads();
    for (let waited = 0; acquisitionPool.threads > 0 && waited < 20_000; waited += 20) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      await releaseAcquisitionThreads();
    }
    assert.equal(acquisitionPool.threads, 0);
  });
});
