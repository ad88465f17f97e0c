import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { SurfaceEntry } from '../../../src/models/observation.js';
import type { AcquireResult } from '../../../src/sources/local-file/acquire-sync.js';
import { acquisitionPool, POOL_SIZE } from '../../../src/sources/local-file/acquisition-pool.js';
import { unpackSurfaceEntries } from '../../../src/sources/local-file/entry-receipt.js';
import { DEFAULT_LIMITS, type SourceLimits } from '../../../src/sources/local-file/limits.js';
import { releaseAcquisitionThreads } from '../../../src/sources/local-file-source.js';
import { SURFACE_FS_VARIANTS } from '../support/surface-fs-variants.js';
import { buildReaderSplitTree, openFdCount, removeDir, tempDir } from '../support/trees.js';

/**
 * Two reader threads share one glob walk (issue 14). The walk reserves each file's share of maxReadBytes
 * in enumeration order, so the result must not depend on which thread read which file, or when: the
 * same acquisition with one reader, with a second reader, and with a second reader slowed down (so the
 * split between the threads moves) must give the same entries, the same gaps in the same order and the
 * same stats. The tree mixes the walk's own gaps (FIFOs, links out of the root, dangling links) with
 * readers' gaps (files cut by the budget), so the order of gaps is really exercised.
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

  for (const variant of SURFACE_FS_VARIANTS) {
    describe(`[${variant.name}]`, { skip: variant.skip }, () => {
      const seam = variant.name;
      for (const [title, limits] of [
        ['no budget reached', {}],
        ['maxReadBytes runs out midway (readers cut files)', { maxReadBytes: 40_000 }],
        ['maxFiles stops the walk', { maxFiles: 300 }],
      ] as const) {
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
          for (const helperDelayMs of [undefined, 0, 3, undefined]) {
            const run = await acquireThroughPool(root, '/**', seam, limits, {
              readers: 2,
              ...(helperDelayMs === undefined ? {} : { helperDelayMs }),
            });
            assert.deepEqual(evidence(run), reference, `helperDelayMs ${helperDelayMs}`);
            runs.push(run);
          }
          if (!skipNoHelper) {
            // The comparison means something only if the second reader really read files.
            const batches = runs.map((run) => run.result.helperBatches ?? 0);
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
        for (let i = 0; i < 20; i++) {
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
