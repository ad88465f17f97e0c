import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, it } from 'node:test';
import fc from 'fast-check';
import { ObservationSchema } from '../../../src/models/observation.js';
import { parseRecord } from '../../../src/models/record.js';
import type { MatchKind } from '../../../src/models/vocabulary.js';
import { LocalFileSurfaceSource } from '../../../src/sources/local-file-source.js';
import { assertResultInvariants, SECRET } from './acquisition-invariants.js';
import { recordingFs } from './recording-fs.js';
import { describeEachSurfaceFs } from './surface-fs-variants.js';
import { acquireDirect, buildTree, removeDir, type Tree, tempDir } from './trees.js';

/**
 * Acquisitions of random small trees (links out of the root, binary files, tiny budgets) on each seam stay
 * within their budgets and never read outside the root. `npm test` runs a sample
 * (local-file/fuzz.test.ts); the heavy lane runs the full count (local-file/fuzz-trees.heavy.test.ts).
 */
export function describeRandomTreeFuzz(options: { numRuns: number }): void {
  describeEachSurfaceFs('fuzz: random small trees', (variant) => {
    let base: string;
    before(() => {
      base = tempDir('witness-fuzz-');
      fs.writeFileSync(path.join(base, 'secret.txt'), SECRET);
    });
    after(() => removeDir(base));

    const leaf = fc.oneof(
      { weight: 4, arbitrary: fc.string({ maxLength: 40 }) },
      { weight: 1, arbitrary: fc.uint8Array({ maxLength: 40 }).map((bytes) => Buffer.from(bytes)) },
      {
        weight: 1,
        arbitrary: fc.constantFrom<{ symlink: string }>(
          { symlink: '../secret.txt' },
          { symlink: '../../secret.txt' },
          { symlink: 'nowhere' },
          { symlink: '.' },
          { symlink: '..' },
          { symlink: 'n0' },
        ),
      },
    );
    const name = fc.constantFrom('n0', 'n1', 'a.txt', 'b.md', 'é', '.hidden', 'x y', 'Z');
    const tree: fc.Arbitrary<Tree> = fc.letrec<{ tree: Tree }>((tie) => ({
      tree: fc.dictionary(
        name,
        fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, fc.record({ dir: tie('tree') })),
        { maxKeys: 5 },
      ) as fc.Arbitrary<Tree>,
    })).tree;
    const limits = fc.record({
      maxFiles: fc.integer({ min: 1, max: 8 }),
      maxContentBytes: fc.integer({ min: 1, max: 50 }),
      maxReadBytes: fc.integer({ min: 1, max: 120 }),
      maxListedEntries: fc.integer({ min: 1, max: 30 }),
    });
    const locator = fc.constantFrom<[string, MatchKind]>(
      ['/**', 'glob'],
      ['/*', 'glob'],
      ['/**/*.txt', 'glob'],
      ['/n0/**', 'glob'],
      ['/*/*', 'glob'],
      ['/n0/a.txt', 'exact'],
      ['/a.txt', 'exact'],
      ['/n1/n0/b.md', 'exact'],
    );

    it('every acquisition terminates within its budgets, sorted, unique, complete only without gaps', () => {
      let run = 0;
      fc.assert(
        fc.property(tree, limits, locator, (shape, budget, [uri, match]) => {
          const root = path.join(base, `t${run++}`);
          fs.mkdirSync(root);
          try {
            buildTree(root, shape);
            const { fs: seam, recording } = recordingFs({}, variant.fs);
            const result = acquireDirect(root, uri, match, budget, seam);
            assertResultInvariants(result, uri, match, budget);
            assert.ok(
              recording.bytesRead <= budget.maxReadBytes + result.stats.filesRead,
              'bytes read beyond the budget and its probes',
            );
            for (const listed of recording.listed)
              assert.ok(listed === root || listed.startsWith(`${root}/`), listed);
          } finally {
            removeDir(root);
          }
        }),
        { numRuns: options.numRuns },
      );
    });

    it('the public source turns every such acquisition into a valid observation', async () => {
      const root = path.join(base, 'public');
      fs.mkdirSync(root);
      buildTree(root, {
        n0: { dir: { 'a.txt': 'x', link: { symlink: '../../secret.txt' } } },
        'b.md': Buffer.from([0xff, 0x00]),
      });
      const source = new LocalFileSurfaceSource({
        root,
        maxFiles: 2,
        maxReadBytes: 3,
        surfaceFs: variant.name,
      });
      try {
        for (const [uri, match] of [
          ['/**', 'glob'],
          ['/n0/link', 'exact'],
          ['/b.md', 'exact'],
        ] as const) {
          const observation = await source.acquire({ scorableType: 'surface', uri, match });
          assert.equal(
            JSON.stringify(
              parseRecord(ObservationSchema, JSON.parse(JSON.stringify(observation)), 'observation'),
            ),
            JSON.stringify(observation),
          );
        }
      } finally {
        await source.close();
      }
    });
  });
}
