import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import type { SurfaceEntry } from '../../../src/models/observation.js';
import { nodeSurfaceFs } from '../../../src/sources/confined-fs/surface-fs.js';
import type { AcquireResult } from '../../../src/sources/local-file/acquire-sync.js';
import { acquisitionPool, POOL_SIZE } from '../../../src/sources/local-file/acquisition-pool.js';
import { DEFAULT_LIMITS, type SourceLimits } from '../../../src/sources/local-file/limits.js';
import { LINK_INTS, packTasks } from '../../../src/sources/local-file/read-lanes.js';
import type { ReadTask } from '../../../src/sources/local-file/reserved-read.js';
import { serveSecondReader } from '../../../src/sources/local-file/second-reader.js';
import { unpackSurfaceEntries } from '../../../src/sources/local-file/surface-entry-unpacking.js';
import { releaseAcquisitionThreads } from '../../../src/sources/local-file-source.js';
import { fullSamples, inRotation, repetitions } from '../../support/sample-size.js';
import { untilSecondReaderRead } from '../support/second-reader-runs.js';
import { SURFACE_FS_VARIANTS } from '../support/surface-fs-variants.js';
import { acquireDirect, buildReaderSplitTree, openFdCount, removeDir, tempDir } from '../support/trees.js';

const O_PATH = 0o10000000;

/**
 * Two reader threads share one glob walk (issue 14). The walk reserves each file's share of maxReadBytes
 * in enumeration order, so the result must not depend on which thread read which file, or when: the
 * same acquisition with one reader, with a second reader, and with a second reader slowed down (so the
 * split between the threads moves) must give the same entries, the same gaps in the same order and the
 * same stats. The tree mixes the walk's own gaps (FIFOs, links out of the root, dangling links) with
 * readers' gaps (files cut by the budget), so the order of gaps is really exercised.
 *
 * `npm test` runs each budget case on one seam (the seams in turn) with a slowed and a plain second
 * reader; two-readers.full-samples.heavy.test.ts runs every case on both seams, four ways each.
 */

const skipNoHelper = POOL_SIZE < 2 ? 'one core: the pool has no thread for a second reader' : false;

interface Run {
  result: AcquireResult;
  entries: SurfaceEntry[];
}

function acquireThroughPool(
  root: string,
  uri: string,
  surfaceFs: 'procfs' | 'openat2',
  limits: Partial<SourceLimits>,
  options: { readers: 1 | 2; helperDelayMs?: number },
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const streamed: SurfaceEntry[] = [];
    acquisitionPool.submit(
      {
        request: { root, uri, match: 'glob', limits: { ...DEFAULT_LIMITS, ...limits } },
        surfaceFs,
        cancel: new SharedArrayBuffer(4),
        readers: options.readers,
        ...(options.helperDelayMs === undefined ? {} : { helperDelayMs: options.helperDelayMs }),
      },
      {
        onEntries: (batch) => streamed.push(...unpackSurfaceEntries(batch)),
        onDone: (outcome) => {
          if (outcome.kind !== 'done') reject(new Error('cancelled'));
          else {
            const entries = streamed
              .concat(outcome.result.entries)
              .sort((a, b) => (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0));
            resolve({ result: outcome.result, entries });
          }
        },
        onFailure: reject,
      },
    );
  });
}

/** Everything that is evidence (not the helper's batch count, which is how the work was split). */
function evidence(run: Run) {
  const { acquisition, gaps, stats } = run.result;
  return { acquisition, gaps, stats, entries: run.entries };
}

describe('two reader threads sharing one walk', () => {
  let base: string;
  let root: string;
  before(async () => {
    base = tempDir('witness-two-readers-');
    root = buildReaderSplitTree(base);
    // Warm the pool (both threads started), so counting open handles counts only the acquisitions'.
    await acquireThroughPool(root, '/**', 'procfs', {}, { readers: 2 });
  });
  after(async () => {
    await releaseAcquisitionThreads();
    removeDir(base);
  });

  for (const [variantIndex, variant] of SURFACE_FS_VARIANTS.entries()) {
    describe(`[${variant.name}]`, { skip: variant.skip }, () => {
      const seam = variant.name;
      for (const [caseIndex, [title, limits]] of (
        [
          ['no budget reached', {}],
          ['maxReadBytes runs out midway (readers cut files)', { maxReadBytes: 40_000 }],
          ['maxFiles stops the walk', { maxFiles: 300 }],
        ] as const
      ).entries()) {
        if (!inRotation(caseIndex, variantIndex, SURFACE_FS_VARIANTS.length)) continue;
        it(`same observation with one reader, two, and a slowed second reader: ${title}`, async () => {
          const fdsBefore = openFdCount();
          const one = await acquireThroughPool(root, '/**', seam, limits, { readers: 1 });
          assert.equal(one.result.helperBatches, undefined, 'readers: 1 never links a second reader');
          const reference = evidence(one);
          assert.equal(reference.acquisition, 'partial');
          const reasons = new Set(reference.gaps.map((gap) => gap.reason));
          for (const reason of ['not_a_file', 'link_outside_root', 'dangling_link']) {
            assert.ok(reasons.has(reason as never), `the tree yields ${reason}`);
          }
          if ('maxReadBytes' in limits) {
            // Readers' gaps sit between the walk's: the order is exercised, not trivially sorted.
            const first = reference.gaps.findIndex((gap) => gap.reason === 'read_limit_exceeded');
            const later = reference.gaps.findIndex((gap, i) => i > first && gap.reason === 'not_a_file');
            assert.ok(first >= 0 && later > first, 'a walk gap follows a reader gap');
          }
          assert.ok(!JSON.stringify(one.entries).includes('OUTSIDE'));
          if (Object.keys(limits).length === 0) {
            const linked = one.entries.find((entry) => entry.uri === '/d10/f25.abs');
            assert.equal(linked?.content, '0/5 '.repeat(6), 'an absolute link inside the root is read');
          }

          const runs: Run[] = [];
          for (const helperDelayMs of fullSamples() ? [undefined, 0, 3, undefined] : [3, undefined]) {
            const run = await acquireThroughPool(root, '/**', seam, limits, {
              readers: 2,
              ...(helperDelayMs === undefined ? {} : { helperDelayMs }),
            });
            assert.deepEqual(evidence(run), reference, `helperDelayMs ${helperDelayMs}`);
            runs.push(run);
          }
          if (!skipNoHelper) {
            const batches = await untilSecondReaderRead(runs, async (attempt) => {
              const run = await acquireThroughPool(root, '/**', seam, limits, { readers: 2 });
              assert.deepEqual(evidence(run), reference, `a further run (${attempt})`);
              return run;
            });
            assert.ok(
              batches.some((count) => count > 0),
              `a second reader read at least one batch: ${batches}`,
            );
          }
          assert.equal(openFdCount(), fdsBefore, 'every handle handed to either reader was closed');
        });
      }

      it('a cancelled acquisition with a second reader closes every handle', async () => {
        const fdsBefore = openFdCount();
        for (let i = 0; i < repetitions(20, 4); i++) {
          const cancel = new SharedArrayBuffer(4);
          const done = new Promise<string>((resolve, reject) => {
            acquisitionPool.submit(
              {
                request: { root, uri: '/**', match: 'glob', limits: { ...DEFAULT_LIMITS } },
                surfaceFs: seam,
                cancel,
                helperDelayMs: 1,
              },
              {
                onEntries: () => {
                  // Cancel once entries flow: the walk and the second reader are both busy by then.
                  Atomics.store(new Int32Array(cancel), 0, 1);
                },
                onDone: (outcome) => resolve(outcome.kind),
                onFailure: reject,
              },
            );
            setTimeout(() => Atomics.store(new Int32Array(cancel), 0, 1), i);
          });
          assert.ok(['cancelled', 'done'].includes(await done));
        }
        assert.equal(openFdCount(), fdsBefore);
      });
    });
  }
});

describe('entries packed on the reading threads (a whole ASCII file travels as its bytes)', () => {
  let root: string;
  before(() => {
    root = tempDir('witness-packed-bytes-');
    // Around every bound of the bytes path: empty, shorter and longer than a small maxContentBytes, 8 KiB
    // exactly and one byte more (the packed-text bound), not ASCII, and more than one batch of files.
    const files: [string, string][] = [
      ['empty.txt', ''],
      ['three.txt', 'abc'],
      ['ten.txt', '0123456789'],
      ['k8.txt', 'k'.repeat(8 * 1024)],
      ['k8plus.txt', 'p'.repeat(8 * 1024 + 1)],
      ['utf8.txt', 'naïve ☕'],
    ];
    for (let i = 0; i < 230; i++) files.push([`many/f${String(i).padStart(3, '0')}.txt`, `line ${i}\n`]);
    for (const [name, text] of files) {
      fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
      fs.writeFileSync(path.join(root, name), text);
    }
  });
  after(async () => {
    await releaseAcquisitionThreads();
    removeDir(root);
  });

  for (const [variantIndex, variant] of SURFACE_FS_VARIANTS.entries()) {
    for (const [caseIndex, [title, limits]] of (
      [
        ['default budgets', {}],
        ['maxContentBytes 4 (texts cut to a prefix)', { maxContentBytes: 4 }],
        ['maxContentBytes 8192', { maxContentBytes: 8 * 1024 }],
      ] as const
    ).entries()) {
      if (!inRotation(caseIndex, variantIndex, SURFACE_FS_VARIANTS.length)) continue;
      it(`give what the walk gives in process, entry for entry [${variant.name}]: ${title}`, {
        skip: variant.skip,
      }, async () => {
        const direct = acquireDirect(root, '/**', 'glob', limits, variant.fs);
        assert.equal(direct.entries.length, 236);
        for (const readers of [1, 2] as const) {
          const run = await acquireThroughPool(root, '/**', variant.name, limits, { readers });
          assert.equal(run.result.entries.length, 0, 'every entry of a glob left in a packed batch');
          assert.deepEqual(run.entries, direct.entries, `${readers} reader(s)`);
          assert.deepEqual(run.result.gaps, direct.gaps);
        }
        const cut = direct.entries.find((entry) => entry.uri === '/ten.txt');
        if ('maxContentBytes' in limits && limits.maxContentBytes === 4) {
          assert.deepEqual([cut?.content, cut?.contentTruncated], ['0123', true]);
        }
      });
    }
  }
});

describe('the second reader when posting a batch fails', () => {
  it('keeps the batch to post with the next one: a gap for the file being read, never a hole', async () => {
    const root = tempDir('witness-post-fails-');
    const tasks: ReadTask[] = [];
    try {
      for (let i = 0; i < 150; i++) {
        const file = path.join(root, `f${String(i).padStart(3, '0')}`);
        fs.writeFileSync(file, `text ${i}`);
        const pathFd = fs.openSync(file, O_PATH);
        const stat = fs.fstatSync(pathFd);
        tasks.push({
          seq: i,
          pathFd,
          uri: `/f${String(i).padStart(3, '0')}`,
          size: stat.size,
          dev: stat.dev,
          ino: stat.ino,
          reservation: stat.size,
        });
      }
      const { port1, port2 } = new MessageChannel();
      const delivered: SurfaceEntry[] = [];
      let posts = 0;
      await new Promise<void>((resolve) => {
        serveSecondReader({
          port: port2,
          link: new Int32Array(new SharedArrayBuffer(LINK_INTS * 4)),
          cancel: new Int32Array(new SharedArrayBuffer(4)),
          fs: nodeSurfaceFs,
          maxContentBytes: 1_000_000,
          onEntries: (batch) => {
            if (posts++ === 0) throw new RangeError('the first post fails');
            delivered.push(...unpackSurfaceEntries(batch));
          },
          onEnd: () => resolve(),
        });
        port1.postMessage({ tasks: packTasks(tasks) });
        port1.postMessage({ end: true });
      });
      const gaps: [number, { uri?: string; reason: string }][] = [];
      for (;;) {
        const message = receiveMessageOnPort(port1);
        if (message === undefined) break;
        gaps.push(...(message.message as { gaps: typeof gaps }).gaps);
      }
      port1.close();
      assert.equal(posts, 3, 'the failed post, the full batch after it, the last one');
      assert.deepEqual(
        delivered.map((entry) => entry.uri),
        tasks.map((task) => task.uri),
        'every file read arrives, in order',
      );
      // The file whose entry completed the failed batch also has its gap: nothing silently lost.
      assert.deepEqual(
        gaps.map(([seq, gap]) => [seq, gap.reason, gap.uri]),
        [[99, 'read_failed', '/f099']],
      );
    } finally {
      for (const task of tasks) fs.closeSync(task.pathFd);
      removeDir(root);
    }
  });
});
