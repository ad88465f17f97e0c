import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, it } from 'node:test';
import type { CoverageGap, Observation, SurfaceEntry } from '../../../src/models/observation.js';
import { acquireAsNobody } from './child-process.js';
import { describeEachSurfaceFs } from './surface-fs-variants.js';
import { buildTree, expectedObservation, removeDir, tempDir, textEntry } from './trees.js';

/**
 * The adversarial corpus's permission cases (SPEC §5.1): a reader running as uid 65534 meets a directory
 * it cannot list or search and files it cannot open, and each is a named gap while the rest is still
 * read. Every acquisition is a node process dropped to uid 65534, so `npm test` runs the first case
 * (`cases: 'sample'`, adversarial-corpus.test.ts) and the heavy lane all of them
 * (adversarial-corpus-unprivileged.heavy.test.ts).
 */
export function describeUnprivilegedReader(options: { cases: 'all' | 'sample' }): void {
  describeEachSurfaceFs(
    'adversarial corpus: what an unprivileged reader is denied (run as uid 65534)',
    (variant) => {
      let base: string;
      let root: string;
      before(() => {
        base = tempDir();
        root = path.join(base, 'ws');
        fs.mkdirSync(root, { mode: 0o755 });
        buildTree(root, {
          locked: { dir: { 'x.txt': 'x', sub: { dir: { 'z.txt': 'z' } } } },
          noexec: { dir: { 'y.txt': 'y' } },
          searchonly: { dir: { 'f.txt': 'f', sub: { dir: { 'g.txt': 'g' } }, link: { symlink: 'f.txt' } } },
          'secret.txt': 'root only',
          'open.txt': 'open',
        });
        fs.chmodSync(path.join(root, 'locked'), 0o700);
        fs.chmodSync(path.join(root, 'noexec'), 0o744);
        // Searchable, not readable: a path through it can be looked up, the directory cannot be listed.
        fs.chmodSync(path.join(root, 'searchonly'), 0o711);
        fs.chmodSync(path.join(root, 'secret.txt'), 0o600);
      });
      after(() => removeDir(base));

      const check = (
        actual: Observation,
        uri: string,
        match: 'exact' | 'glob',
        entries: SurfaceEntry[],
        gaps: CoverageGap[],
      ) =>
        assert.deepEqual(
          actual,
          expectedObservation(actual, {
            root,
            uri,
            match,
            acquisition: gaps.length ? 'partial' : 'complete',
            entries,
            gaps,
          }),
        );

      it('an unlistable directory is listing_failed, an unreadable file read_failed, the rest still read', async () => {
        const observation = await acquireAsNobody(base, root, '/**', 'glob', variant.name);
        check(
          observation,
          '/**',
          'glob',
          [textEntry('/open.txt', 'open')],
          [
            {
              reason: 'listing_failed',
              uri: '/locked',
              detail: 'the directory could not be opened (EACCES)',
            },
            { reason: 'read_failed', uri: '/noexec/y.txt', detail: 'open failed (EACCES)' },
            {
              reason: 'listing_failed',
              uri: '/searchonly',
              detail: 'the directory could not be opened (EACCES)',
            },
            { reason: 'read_failed', uri: '/secret.txt', detail: 'open for reading failed (EACCES)' },
          ],
        );
      });

      if (options.cases === 'sample') return;

      it('an exact locator under an unsearchable directory is listing_failed, never a proven absence', async () => {
        const observation = await acquireAsNobody(base, root, '/locked/x.txt', 'exact', variant.name);
        check(
          observation,
          '/locked/x.txt',
          'exact',
          [],
          [{ reason: 'listing_failed', uri: '/locked/x.txt', detail: '/locked: lookup failed (EACCES)' }],
        );
        const missing = await acquireAsNobody(base, root, '/locked/missing.txt', 'exact', variant.name);
        assert.equal(missing.acquisition, 'partial');
        const deeper = await acquireAsNobody(base, root, '/locked/sub/z.txt', 'exact', variant.name);
        check(
          deeper,
          '/locked/sub/z.txt',
          'exact',
          [],
          [{ reason: 'listing_failed', uri: '/locked/sub/z.txt', detail: '/locked: lookup failed (EACCES)' }],
        );
      });

      it('an exact locator under a directory that can be searched but not read is read, on either seam', async () => {
        for (const [uri, text] of [
          ['/searchonly/f.txt', 'f'],
          ['/searchonly/sub/g.txt', 'g'],
          // A link as the file's own name is still followed beneath the root.
          ['/searchonly/link', 'f'],
        ] as const) {
          const observation = await acquireAsNobody(base, root, uri, 'exact', variant.name);
          check(observation, uri, 'exact', [textEntry(uri, text)], []);
        }
        // A missing name there is a proven absence: the lookup ran.
        const missing = await acquireAsNobody(base, root, '/searchonly/missing.txt', 'exact', variant.name);
        check(missing, '/searchonly/missing.txt', 'exact', [], []);
      });

      it('an unreadable exact file is read_failed', async () => {
        const observation = await acquireAsNobody(base, root, '/secret.txt', 'exact', variant.name);
        check(
          observation,
          '/secret.txt',
          'exact',
          [],
          [{ reason: 'read_failed', uri: '/secret.txt', detail: 'open for reading failed (EACCES)' }],
        );
      });
    },
  );
}
