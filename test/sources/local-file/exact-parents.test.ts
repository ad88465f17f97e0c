import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { AcquireResult } from '../../../src/sources/local-file/acquire-sync.js';
import type { SurfaceFs } from '../../../src/sources/local-file/surface-fs.js';
import { nodeSurfaceFs } from '../../../src/sources/local-file/surface-fs.js';
import { SURFACE_FS_VARIANTS } from '../support/surface-fs-variants.js';
import { acquireDirect, mkfifo, openFdCount, removeDir, tempDir } from '../support/trees.js';

/**
 * The parents of an exact locator on the openat2 seam are opened in one lookup (`openDirectoriesAt`):
 * the same open the seam makes for the last parent when it walks them one at a time, without the opens
 * above it; and before that the file itself is tried in one lookup (`openPathBeneath`: no symlink
 * anywhere on the way, the last segment included). These tests show that the evidence is the same with
 * both lookups, with the parents' only, with neither (and the same as the procfs seam's) for every kind
 * of parent and last segment an agent can plant — a symlink to a directory inside or outside the root, a
 * dangling link, a file, a FIFO, a missing directory, a link to a file inside or outside — that the
 * lookups are what actually ran on a plain path, and that a refused lookup falls back to the walk.
 */

const openat2 = SURFACE_FS_VARIANTS.find((variant) => variant.name === 'openat2');

/** Which one-lookup methods the seam keeps: both, the parents' only, or neither (one at a time). */
type Lookups = 'both' | 'parents' | 'none';

/** The seam, counting its lookups and its directory opens one at a time. */
function counting(base: SurfaceFs, lookups: Lookups = 'both') {
  const counts = { file: 0, fileRefused: 0, one: 0, oneRefused: 0, each: 0 };
  const seam: SurfaceFs = {
    ...base,
    openDirectoryAt: (dirFd, name) => {
      counts.each++;
      return base.openDirectoryAt(dirFd, name);
    },
  };
  if (lookups === 'none' || base.openDirectoriesAt === undefined) delete seam.openDirectoriesAt;
  else {
    const one = base.openDirectoriesAt.bind(base);
    seam.openDirectoriesAt = (dirFd, names) => {
      counts.one++;
      const fd = one(dirFd, names);
      if (fd === undefined) counts.oneRefused++;
      return fd;
    };
  }
  if (lookups !== 'both' || base.openPathBeneath === undefined) delete seam.openPathBeneath;
  else {
    const file = base.openPathBeneath.bind(base);
    seam.openPathBeneath = (dirFd, names) => {
      counts.file++;
      const fd = file(dirFd, names);
      if (fd === undefined) counts.fileRefused++;
      return fd;
    };
  }
  return { seam, counts };
}

/** What an acquisition proves: status, entries and gaps (not timings or the implementation). */
const evidence = (result: AcquireResult) => ({
  acquisition: result.acquisition,
  entries: result.entries,
  gaps: result.gaps,
  candidates: result.stats.candidates,
});

describe('exact locators: parents opened in one lookup on the openat2 seam', { skip: openat2?.skip }, () => {
  let base: string;
  let root: string;
  before(() => {
    base = tempDir('witness-exact-parents-');
    root = path.join(base, 'root');
    const outside = path.join(base, 'outside');
    fs.mkdirSync(path.join(outside, 'c'), { recursive: true });
    fs.writeFileSync(path.join(outside, 'c', 'f.txt'), 'OUTSIDE SECRET');
    fs.mkdirSync(path.join(root, 'a', 'b', 'c', 'd'), { recursive: true });
    fs.writeFileSync(path.join(root, 'a', 'b', 'c', 'd', 'f.txt'), 'deep inside');
    fs.writeFileSync(path.join(root, 'a', 'b', 'c', 'f.txt'), 'inside');
    fs.symlinkSync('b', path.join(root, 'a', 'inside-link'));
    fs.symlinkSync(outside, path.join(root, 'a', 'outside-link'));
    fs.symlinkSync('../../outside', path.join(root, 'a', 'relative-outside-link'));
    fs.symlinkSync('nothing-here', path.join(root, 'a', 'dangling'));
    fs.writeFileSync(path.join(root, 'a', 'file'), 'a file where a directory would be');
    mkfifo(path.join(root, 'a', 'fifo'));
    // A link to a file with a path below it (ENOTDIR through the link).
    fs.symlinkSync('file', path.join(root, 'a', 'file-link'));
    // Links as the last segment: followed by the file's own open, beneath the root only.
    fs.symlinkSync('f.txt', path.join(root, 'a', 'b', 'c', 'link.txt'));
    fs.symlinkSync(path.join(outside, 'c', 'f.txt'), path.join(root, 'a', 'b', 'c', 'outside.txt'));
    fs.symlinkSync('nothing-here', path.join(root, 'a', 'b', 'c', 'dangling.txt'));
    fs.symlinkSync('b/c/f.txt', path.join(root, 'a', 'top-link.txt'));
    mkfifo(path.join(root, 'a', 'b', 'c', 'fifo'));
  });
  after(() => removeDir(base));

  const uris = [
    '/a/b/c/d/f.txt',
    '/a/b/c/f.txt',
    '/a/b/c/missing.txt',
    '/a/b/missing/f.txt',
    '/a/inside-link/c/f.txt',
    '/a/outside-link/c/f.txt',
    '/a/relative-outside-link/c/f.txt',
    '/a/dangling/c/f.txt',
    '/a/file/c/f.txt',
    '/a/fifo/c/f.txt',
    '/a/file-link/c/f.txt',
    '/a/b/c/d',
    '/a/b/c/link.txt',
    '/a/b/c/outside.txt',
    '/a/b/c/dangling.txt',
    '/a/b/c/fifo',
    '/a/top-link.txt',
    '/a/file',
  ];

  for (const uri of uris) {
    it(`${uri}: the same evidence with both lookups, the parents' only, neither, and on the procfs seam`, () => {
      const seam = openat2?.fs as SurfaceFs;
      const fds = openFdCount();
      const fast = counting(seam);
      const withBoth = evidence(acquireDirect(root, uri, 'exact', {}, fast.seam));
      const parentsOnly = counting(seam, 'parents');
      const withParents = evidence(acquireDirect(root, uri, 'exact', {}, parentsOnly.seam));
      const each = evidence(acquireDirect(root, uri, 'exact', {}, counting(seam, 'none').seam));
      const procfs = evidence(acquireDirect(root, uri, 'exact', {}, nodeSurfaceFs));
      assert.deepStrictEqual(withBoth, each);
      assert.deepStrictEqual(withParents, each);
      assert.deepStrictEqual(withBoth, procfs);
      assert.equal(fast.counts.file, 1, 'every exact locator with a parent tries the file in one lookup');
      const parents = uri.split('/').length - 2;
      assert.equal(
        parentsOnly.counts.one,
        parents > 1 ? 1 : 0,
        'every exact locator with two or more parents tries the parents in one lookup',
      );
      assert.equal(openFdCount(), fds, 'every handle was closed');
      const text = JSON.stringify(withBoth);
      assert.ok(!text.includes('OUTSIDE SECRET'), text);
    });
  }

  it('a plain path opens the file in one lookup: no parent is opened, and the file is read', () => {
    const { seam, counts } = counting(openat2?.fs as SurfaceFs);
    const result = acquireDirect(root, '/a/b/c/d/f.txt', 'exact', {}, seam);
    assert.equal(result.entries[0]?.content, 'deep inside');
    assert.deepEqual(counts, { file: 1, fileRefused: 0, one: 0, oneRefused: 0, each: 0 });
  });

  it('without the file lookup, a plain path opens no parent one at a time, and reads the file', () => {
    const { seam, counts } = counting(openat2?.fs as SurfaceFs, 'parents');
    const result = acquireDirect(root, '/a/b/c/d/f.txt', 'exact', {}, seam);
    assert.equal(result.entries[0]?.content, 'deep inside');
    assert.deepEqual(counts, { file: 0, fileRefused: 0, one: 1, oneRefused: 0, each: 0 });
  });

  it('a symlinked parent makes both lookups refuse; the walk one at a time finds and names the link', () => {
    const { seam, counts } = counting(openat2?.fs as SurfaceFs);
    const result = acquireDirect(root, '/a/outside-link/c/f.txt', 'exact', {}, seam);
    assert.deepEqual(counts, { file: 1, fileRefused: 1, one: 1, oneRefused: 1, each: 2 });
    assert.deepEqual(result.entries, []);
    assert.deepEqual(
      result.gaps.map((gap) => [gap.reason, gap.uri]),
      [['link_not_followed', '/a/outside-link/c/f.txt']],
    );
  });

  it('a link as the last segment makes the file lookup refuse; the usual open follows it beneath the root', () => {
    const { seam, counts } = counting(openat2?.fs as SurfaceFs);
    const result = acquireDirect(root, '/a/b/c/link.txt', 'exact', {}, seam);
    assert.equal(result.entries[0]?.content, 'inside');
    assert.deepEqual(counts, { file: 1, fileRefused: 1, one: 1, oneRefused: 0, each: 0 });
    const { seam: outsideSeam, counts: outsideCounts } = counting(openat2?.fs as SurfaceFs);
    const outside = acquireDirect(root, '/a/b/c/outside.txt', 'exact', {}, outsideSeam);
    assert.deepEqual(outside.entries, []);
    assert.deepEqual(
      outside.gaps.map((gap) => gap.reason),
      ['link_outside_root'],
    );
    assert.equal(outsideCounts.fileRefused, 1);
  });

  it('one parent: the file in one lookup, no parent opened; without it, the usual open', () => {
    const both = counting(openat2?.fs as SurfaceFs);
    const result = acquireDirect(root, '/a/file', 'exact', {}, both.seam);
    assert.equal(result.entries[0]?.content, 'a file where a directory would be');
    assert.deepEqual(both.counts, { file: 1, fileRefused: 0, one: 0, oneRefused: 0, each: 0 });
    const parents = counting(openat2?.fs as SurfaceFs, 'parents');
    acquireDirect(root, '/a/file', 'exact', {}, parents.seam);
    assert.deepEqual(parents.counts, { file: 0, fileRefused: 0, one: 0, oneRefused: 0, each: 1 });
  });

  it('the seam refuses names it cannot compose (empty, holding "/" or NUL) and parents it did not open', () => {
    const seam = openat2?.fs as SurfaceFs;
    const rootFd = seam.openRoot(fs.realpathSync(root));
    try {
      const one = seam.openDirectoriesAt?.bind(seam);
      assert.ok(one !== undefined);
      assert.equal(one(rootFd, [Buffer.from('a'), Buffer.from('')]), undefined);
      assert.equal(one(rootFd, [Buffer.from('a/b')]), undefined);
      assert.equal(one(rootFd, [Buffer.from('a'), Buffer.from('b\0')]), undefined);
      assert.equal(one(rootFd, []), undefined);
      const stray = fs.openSync(root, 'r');
      try {
        assert.equal(one(stray, [Buffer.from('a'), Buffer.from('b')]), undefined, 'not a handle it opened');
      } finally {
        fs.closeSync(stray);
      }
      const fd = one(rootFd, [Buffer.from('a'), Buffer.from('b')]);
      assert.ok(fd !== undefined);
      assert.ok(seam.provenInside(fd), 'the kernel proved it beneath the root');
      // Registered as the walk one at a time would have: a child opens beneath the root from it.
      const child = seam.openPathAt(fd, Buffer.from('c'));
      assert.ok(seam.provenInside(child));
      seam.close(child);
      seam.close(fd);
    } finally {
      seam.close(rootFd);
    }
  });

  it('the file lookup refuses what it cannot compose, handles it did not open, and any link on the way', () => {
    const seam = openat2?.fs as SurfaceFs;
    const rootFd = seam.openRoot(root);
    try {
      const file = seam.openPathBeneath?.bind(seam);
      assert.ok(file !== undefined);
      const names = (...parts: string[]) => parts.map((part) => Buffer.from(part));
      assert.equal(file(rootFd, names('a', '')), undefined);
      assert.equal(file(rootFd, names('a/b', 'c', 'f.txt')), undefined);
      assert.equal(file(rootFd, names('a', 'b', 'c', 'f.txt\0')), undefined);
      assert.equal(file(rootFd, []), undefined);
      assert.equal(file(rootFd, names('a', 'inside-link', 'c', 'f.txt')), undefined, 'a parent link');
      assert.equal(file(rootFd, names('a', 'b', 'c', 'link.txt')), undefined, 'a last-segment link');
      assert.equal(file(rootFd, names('a', 'b', 'c', 'missing.txt')), undefined);
      const stray = fs.openSync(root, 'r');
      try {
        assert.equal(file(stray, names('a', 'b', 'c', 'f.txt')), undefined, 'not a handle it opened');
      } finally {
        fs.closeSync(stray);
      }
      const fd = file(rootFd, names('a', 'b', 'c', 'f.txt'));
      assert.ok(fd !== undefined);
      try {
        assert.ok(seam.provenInside(fd), 'the kernel proved it beneath the root');
        assert.equal(
          nodeSurfaceFs.handlePath(fd).toString(),
          path.join(fs.realpathSync(root), 'a/b/c/f.txt'),
        );
        // An O_PATH handle: no read intent until it is reopened.
        assert.throws(() => fs.readSync(fd, Buffer.alloc(1)), { code: 'EBADF' });
      } finally {
        seam.close(fd);
      }
      assert.equal(seam.provenInside(fd), false, 'closing forgets it');
    } finally {
      seam.close(rootFd);
    }
  });
});
