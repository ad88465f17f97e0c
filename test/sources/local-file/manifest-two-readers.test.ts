import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ManifestEntry } from '../../../src/models/manifest.js';
import { markFileSystemClock } from '../../../src/sources/file-system-clock.js';
import type { AcquireResult } from '../../../src/sources/local-file/acquire-sync.js';
import { acquisitionPool, POOL_SIZE } from '../../../src/sources/local-file/acquisition-pool.js';
import { type BaselineDigests, CLEAN_MARGIN_MS } from '../../../src/sources/local-file/baseline-digests.js';
import { DEFAULT_LIMITS, type SourceLimits } from '../../../src/sources/local-file/limits.js';
import { unpackManifestEntries } from '../../../src/sources/local-file/manifest-entry-unpacking.js';
import { releaseAcquisitionThreads } from '../../../src/sources/local-file-source.js';
import { fullSamples, inRotation, repetitions } from '../../support/sample-size.js';
import { untilSecondReaderRead } from '../support/second-reader-runs.js';
import { SURFACE_FS_VARIANTS } from '../support/surface-fs-variants.js';
import { buildReaderSplitTree, openFdCount, removeDir, tempDir } from '../support/trees.js';

/**
 * A manifest's files read by two threads (manifest-reads.ts): the walk reserves each file's share of
 * maxReadBytes in enumeration order and makes every entry in walk order, so the manifest must not depend
 * on which thread read which file, or when. The same manifest with one reader, with a second reader, and
 * with a second reader slowed down (so entries wait for their reads while later ones are complete) must
 * give the same entries in the same order, the same gaps in the same order, the same stats and the same
 * stat keys; and so must a final manifest that carries most digests and reads the files that changed.
 *
 * `npm test` runs each case on one seam (the seams in turn), a slowed and a plain second reader each;
 * manifest-two-readers.full-samples.heavy.test.ts runs every case on both seams, four ways each.
 */

const skipNoHelper = POOL_SIZE < 2 ? 'one core: the pool has no thread for a second reader' : false;

interface Run {
  result: AcquireResult;
  /** The manifest in uri order: the batches streamed while the walk ran, then the rest, by the walk's order. */
  manifest: ManifestEntry[];
}

function manifestThroughPool(
  root: string,
  surfaceFs: 'procfs' | 'openat2',
  limits: Partial<SourceLimits>,
  options: { readers: 1 | 2; helperDelayMs?: number; carry?: BaselineDigests },
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const streamed: ManifestEntry[] = [];
    acquisitionPool.submit(
      {
        request: {
          root,
          uri: '/**',
          match: 'glob',
          limits: { ...DEFAULT_LIMITS, ...limits },
          mode: 'manifest',
          ...(options.carry === undefined ? {} : { reuse: options.carry }),
        },
        surfaceFs,
        cancel: new SharedArrayBuffer(4),
        readers: options.readers,
        ...(options.helperDelayMs === undefined ? {} : { helperDelayMs: options.helperDelayMs }),
      },
      {
        onEntries: (batch) => streamed.push(...unpackManifestEntries(batch)),
        onDone: (outcome) => {
          if (outcome.kind !== 'done') {
            reject(new Error('cancelled'));
            return;
          }
          const { result } = outcome;
          const walked = streamed.concat(result.manifest ?? []);
          const manifest =
            result.manifestOrder === undefined
              ? walked
              : Array.from(result.manifestOrder, (at) => walked[at] as ManifestEntry);
          resolve({ result, manifest });
        },
        onFailure: reject,
      },
    );
  });
}

/** Everything that is evidence (not the helper's batch count, which is how the work was split). */
function evidence(run: Run) {
  const { acquisition, gaps, stats, statKeys, reused, reuseCounts } = run.result;
  return {
    acquisition,
    gaps,
    stats,
    manifest: run.manifest,
    statKeys: Array.from(statKeys ?? []),
    reused: Array.from(reused ?? []),
    reuseCounts,
  };
}

describe('a manifest read by two reader threads', () => {
  let base: string;
  let root: string;
  before(async () => {
    base = tempDir('witness-manifest-two-readers-');
    root = buildReaderSplitTree(base);
    // The setting is process-wide, and test files may share a process with one that ran `witness run`
    // in process (which turns it off, as a campaign process does): these tests want the library default.
    acquisitionPool.setManifestsShareReaders(true);
    // Warm the pool (both threads started), so counting open handles counts only the acquisitions'.
    await manifestThroughPool(root, 'procfs', {}, { readers: 2 });
  });
  after(async () => {
    await releaseAcquisitionThreads();
    removeDir(base);
  });

  for (const [variantIndex, variant] of SURFACE_FS_VARIANTS.entries()) {
    describe(`[${variant.name}]`, { skip: variant.skip }, () => {
      const seam = variant.name;
      /** Whether this lane runs budget case `index` on this seam (each case on one seam in `npm test`). */
      const here = (index: number) => inRotation(index, variantIndex, SURFACE_FS_VARIANTS.length);

      /**
       * Manifests (final ones, with `carry`) cancelled at their first entries or after 0, 1, 2… ms, the
       * second reader slowed so that it holds handles meanwhile: each ends cancelled or done, and every
       * handle either reader was given is closed afterwards.
       */
      async function assertCancelledManifestsCloseHandles(times: number, carry?: BaselineDigests) {
        const fdsBefore = openFdCount();
        for (let i = 0; i < times; i++) {
          const cancel = new SharedArrayBuffer(4);
          const done = new Promise<string>((resolve, reject) => {
            acquisitionPool.submit(
              {
                request: {
                  root,
                  uri: '/**',
                  match: 'glob',
                  limits: { ...DEFAULT_LIMITS },
                  mode: 'manifest',
                  ...(carry === undefined ? {} : { reuse: carry }),
                },
                surfaceFs: seam,
                cancel,
                helperDelayMs: 1,
              },
              {
                onEntries: () => Atomics.store(new Int32Array(cancel), 0, 1),
                onDone: (outcome) => resolve(outcome.kind),
                onFailure: reject,
              },
            );
            setTimeout(() => Atomics.store(new Int32Array(cancel), 0, 1), i);
          });
          assert.ok(['cancelled', 'done'].includes(await done));
        }
        assert.equal(openFdCount(), fdsBefore);
      }

      /** The reference with one reader, then the same with two, checked entry for entry. */
      async function assertSameWithTwoReaders(
        limits: Partial<SourceLimits>,
        carry?: BaselineDigests,
        /** false: too few files are read for a batch to reach the second reader (it may still stat). */
        helperReads = true,
      ): Promise<{ one: Run; runs: Run[] }> {
        const fdsBefore = openFdCount();
        const withCarry = carry === undefined ? {} : { carry };
        const one = await manifestThroughPool(root, seam, limits, { readers: 1, ...withCarry });
        assert.equal(one.result.helperBatches, undefined, 'readers: 1 never links a second reader');
        const reference = evidence(one);
        const runs: Run[] = [];
        for (const helperDelayMs of fullSamples() ? [undefined, 0, 3, undefined] : [3, undefined]) {
          const run = await manifestThroughPool(root, seam, limits, {
            readers: 2,
            ...withCarry,
            ...(helperDelayMs === undefined ? {} : { helperDelayMs }),
          });
          assert.deepStrictEqual(evidence(run), reference, `helperDelayMs ${helperDelayMs}`);
          runs.push(run);
        }
        if (!skipNoHelper && helperReads) {
          const batches = await untilSecondReaderRead(runs, async (attempt) => {
            const run = await manifestThroughPool(root, seam, limits, { readers: 2, ...withCarry });
            assert.deepStrictEqual(evidence(run), reference, `a further run (${attempt})`);
            return run;
          });
          assert.ok(
            batches.some((count) => count > 0),
            `a second reader read at least one batch: ${batches}`,
          );
        }
        assert.equal(openFdCount(), fdsBefore, 'every handle handed to either reader was closed');
        return { one, runs };
      }

      if (here(0))
        it('same manifest with one reader, two, and a slowed second reader: no budget reached', async () => {
          const { one } = await assertSameWithTwoReaders({});
          assert.equal(one.result.acquisition, 'complete');
          const files = one.manifest.filter((entry) => entry.type === 'file');
          assert.equal(files.length, 480);
          assert.ok(files.every((entry) => entry.sha256 !== null));
          const links = one.manifest.filter((entry) => entry.type === 'symlink');
          assert.equal(links.length, 12, 'links are recorded, never followed');
          assert.ok(!JSON.stringify(one.manifest).includes('OUTSIDE'));
          // Every fully read file has its stat key, so a later manifest may carry it.
          const keys = one.result.statKeys as Float64Array;
          one.manifest.forEach((entry, i) => {
            assert.equal(Number.isNaN(keys[i * 6]), entry.type !== 'file', entry.uri);
          });
        });

      if (here(1))
        it('same manifest when maxReadBytes runs out midway (readers cut files)', async () => {
          const { one } = await assertSameWithTwoReaders({ maxReadBytes: 40_000 });
          assert.equal(one.result.acquisition, 'partial');
          const cut = one.result.gaps.filter((gap) => gap.reason === 'read_limit_exceeded');
          assert.ok(cut.length > 20, `files were cut: ${cut.length}`);
          // A cut file has no digest and no key (a later manifest must read it again).
          const keys = one.result.statKeys as Float64Array;
          const firstCut = one.manifest.findIndex((entry) => entry.uri === cut[0]?.uri);
          assert.ok(firstCut >= 0);
          assert.equal(one.manifest[firstCut]?.sha256, null);
          assert.ok(Number.isNaN(keys[firstCut * 6]));
          // The read entries before the cut are complete, the ones after it are not: an order, not a race.
          const digests = one.manifest.filter((entry) => entry.type === 'file').map((e) => e.sha256 !== null);
          assert.ok(digests.indexOf(false) > 0 && digests.lastIndexOf(true) < digests.indexOf(false));
        });

      if (here(2))
        it('same manifest when maxFiles stops the walk', async () => {
          const { one } = await assertSameWithTwoReaders({ maxFiles: 300 });
          assert.equal(one.result.gaps.at(-1)?.reason, 'file_limit_exceeded');
        });

      // Case 3 falls to openat2, the seam whose second reader also stats names ahead (checked below).
      if (here(3))
        it('same final manifest (carry-over) with one reader and two, the changed files read', async () => {
          const baseline = await manifestThroughPool(root, seam, {}, { readers: 1 });
          // The clean moment must come after every file's last change (the other seam's test restored some).
          const newest = Math.max(
            ...baseline.manifest.map((entry) => fs.lstatSync(path.join(root, entry.uri)).ctimeMs),
          );
          let mark = markFileSystemClock(base);
          while (mark.ctimeMs <= newest + CLEAN_MARGIN_MS) {
            await new Promise((resolve) => setTimeout(resolve, 5));
            mark = markFileSystemClock(base);
          }
          // Let the clean moment pass before the changes, so they are seen by ctime as well as by content.
          await new Promise((resolve) => setTimeout(resolve, 20));
          /** Each changed file and its content before, to restore for the other seam's tests. */
          const changed = new Map<string, Buffer>();
          for (let d = 0; d < 12; d += 2) {
            for (let f = 0; f < 40; f += 3) {
              const name = path.join(
                root,
                `d${String(d).padStart(2, '0')}`,
                `f${String(f).padStart(2, '0')}.txt`,
              );
              changed.set(name, fs.readFileSync(name));
              fs.writeFileSync(name, `changed ${d}/${f}`);
            }
          }
          // Names swapped since the baseline for what a carrying walk must never take for the file: a
          // symlink to a file with the very same bytes (outside the directory), and a directory. Whichever
          // thread stats them (stat-ahead.ts), they are recorded as what they now are.
          const swapped = new Map<string, Buffer>();
          for (let d = 1; d < 12; d += 2) {
            const dir = path.join(root, `d${String(d).padStart(2, '0')}`);
            const toLink = path.join(dir, 'f01.txt');
            const toDir = path.join(dir, 'f02.txt');
            swapped.set(toLink, fs.readFileSync(toLink));
            swapped.set(toDir, fs.readFileSync(toDir));
            fs.writeFileSync(path.join(base, `same-${d}.txt`), fs.readFileSync(toLink));
            fs.rmSync(toLink);
            fs.symlinkSync(path.join(base, `same-${d}.txt`), toLink);
            fs.rmSync(toDir);
            fs.mkdirSync(toDir);
          }
          try {
            const carry: BaselineDigests = {
              uris: baseline.manifest.map((entry) => entry.uri),
              keys: baseline.result.statKeys as Float64Array,
              cleanBeforeMs: mark.ctimeMs,
              dev: mark.dev,
            };
            const { one, runs } = await assertSameWithTwoReaders({}, carry);
            const counts = one.result.reuseCounts;
            assert.equal(counts?.changed, changed.size, 'every changed file was read');
            assert.equal(counts?.carried, 480 - changed.size - swapped.size, 'every other file was carried');
            const read = new Map(one.manifest.map((entry) => [entry.uri, entry]));
            assert.equal(read.get('/d00/f00.txt')?.sizeBytes, 'changed 0/0'.length);
            for (let d = 1; d < 12; d += 2) {
              const dir = `/d${String(d).padStart(2, '0')}`;
              assert.equal(read.get(`${dir}/f01.txt`)?.type, 'symlink', `${dir}/f01.txt`);
              assert.equal(read.get(`${dir}/f01.txt`)?.sha256, null);
              assert.equal(read.get(`${dir}/f02.txt`)?.type, 'directory', `${dir}/f02.txt`);
            }
            assert.equal(one.result.helperStats, undefined, 'one reader: every stat taken by the walk');
            if (variant.name === 'openat2' && !skipNoHelper) {
              // The comparison covers the shared stats only if the second reader really took some: whether
              // it does depends on when its thread attaches, so runs are repeated (each compared again)
              // until one had names statted by it.
              const stats = runs.map((run) => run.result.helperStats ?? 0);
              for (let more = 0; more < 40 && !stats.some((count) => count > 0); more++) {
                const run = await manifestThroughPool(root, seam, {}, { readers: 2, carry });
                assert.deepStrictEqual(evidence(run), evidence(one));
                stats.push(run.result.helperStats ?? 0);
              }
              assert.ok(
                stats.some((count) => count > 0),
                `the second reader statted names: ${stats}`,
              );
            }
            // The same when maxFiles stops the carrying walk midway (names statted ahead and never visited).
            const stopped = await assertSameWithTwoReaders({ maxFiles: 300 }, carry, false);
            assert.equal(stopped.one.result.gaps.at(-1)?.reason, 'file_limit_exceeded');
            // A carrying walk cancelled at any moment (stats ahead under way included) closes every handle.
            await assertCancelledManifestsCloseHandles(repetitions(12, 3), carry);
          } finally {
            for (const [name, content] of changed) fs.writeFileSync(name, content);
            for (const [name, content] of swapped) {
              fs.rmSync(name, { recursive: true });
              fs.writeFileSync(name, content);
            }
          }
        });

      it('a cancelled manifest with a second reader closes every handle', async () => {
        await assertCancelledManifestsCloseHandles(repetitions(20, 4));
      });
    });
  }

  it('a campaign process reads each manifest with one thread, the library two (setManifestsShareReaders)', {
    skip: skipNoHelper,
  }, async () => {
    // helperBatches is set exactly when the walk was given lanes shared with a second reader.
    acquisitionPool.setManifestsShareReaders(true);
    const shared = await manifestThroughPool(root, 'procfs', {}, { readers: 2 });
    assert.notEqual(shared.result.helperBatches, undefined, 'by default a manifest may take a second reader');
    acquisitionPool.setManifestsShareReaders(false);
    try {
      const alone = await manifestThroughPool(root, 'procfs', {}, { readers: 2 });
      assert.equal(alone.result.helperBatches, undefined, 'no second reader was offered');
      assert.deepEqual(alone.manifest, shared.manifest, 'the same evidence either way');
    } finally {
      acquisitionPool.setManifestsShareReaders(true);
    }
  });
});
