import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { SurfaceFs } from '../../../src/sources/confined-fs/surface-fs.js';
import { nodeSurfaceFs } from '../../../src/sources/confined-fs/surface-fs.js';
import type { AcquireResult } from '../../../src/sources/local-file/acquire-sync.js';
import { SURFACE_FS_VARIANTS } from '../support/surface-fs-variants.js';
import { acquireDirect, mkfifo, openFdCount, removeDir, tempDir } from '../support/trees.js';

/**
 * On the openat2 seam an exact locator is first opened whole, as O_PATH, in one lookup with no link
 * anywhere on its path (`openPathBeneath`); when that is refused, its parents are opened in one lookup
 * (`openDirectoriesAt`: the same open the seam makes for the last parent when it walks them one at a
 * time, without the opens above it). These tests show that the evidence is the same with both lookups,
 * with only the second, with neither, and on the procfs seam, for every kind of parent or file an agent
 * can plant — a symlink to a directory inside or outside the root, a dangling link, a file, a FIFO, a
 * missing directory, a link to a file inside or outside — that the whole-path lookup is what actually ran
 * on a plain path, and that each refused lookup falls back to the next.
 */

const openat2 = SURFACE_FS_VARIANTS.find((variant) => variant.name === 'openat2');

/**
 * The seam, counting its lookups; `without` drops the one-lookup methods: 'path' the whole path's only,
 * 'both' that and the parents' too.
 */
function counting(base: SurfaceFs, without?: 'path' | 'both') {
  const counts = { path: 0, pathRefused: 0, one: 0, oneRefused: 0, each: 0 };
  const seam: SurfaceFs = {
    ...base,
    openDirectoryAt: (dirFd, name) => {
      counts.each++;
      return base.openDirectoryAt(dirFd, name);
    },
  };
  if (without !== undefined || base.openPathBeneath === undefined) delete seam.openPathBeneath;
  else {
    const whole = base.openPathBeneath.bind(base);
    seam.openPathBeneath = (dirFd, names) => {
      counts.path++;
      const fd = whole(dirFd, names);
      if (fd === undefined) counts.pathRefused++;
      return fd;
    };
  }
  if (without === 'both' || base.openDirectoriesAt === undefined) delete seam.openDirectoriesAt;
  else {
    const one = base.openDirectoriesAt.bind(base);
    seam.openDirectoriesAt = (dirFd, names) => {
      counts.one++;
      const fd = one(dirFd, names);
      if (fd === undefined) counts.oneRefused++;
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
    // Links as the file's own name: to a file inside, to one outside, to nothing.
    fs.symlinkSync('f.txt', path.join(root, 'a', 'b', 'c', 'f-link'));
    fs.symlinkSync(path.join(outside, 'c', 'f.txt'), path.join(root, 'a', 'b', 'c', 'outside-file-link'));
    fs.symlinkSync('gone', path.join(root, 'a', 'b', 'c', 'dangling-file-link'));
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
    '/a/b/c/f-link',
    '/a/b/c/outside-file-link',
    '/a/b/c/dangling-file-link',
    '/a/b/c/fifo',
    '/a/file',
  ];

  for (const uri of uris) {
    it(`${uri}: the same evidence with both lookups, with one, with neither, and on the procfs seam`, () => {
      const seam = openat2?.fs as SurfaceFs;
      const fds = openFdCount();
      const fast = counting(seam);
      const withBoth = evidence(acquireDirect(root, uri, 'exact', {}, fast.seam));
      const parentsOnly = counting(seam, 'path');
      const withOne = evidence(acquireDirect(root, uri, 'exact', {}, parentsOnly.seam));
      const each = evidence(acquireDirect(root, uri, 'exact', {}, counting(seam, 'both').seam));
      const procfs = evidence(acquireDirect(root, uri, 'exact', {}, nodeSurfaceFs));
      assert.deepStrictEqual(withBoth, withOne);
      assert.deepStrictEqual(withBoth, each);
      assert.deepStrictEqual(withBoth, procfs);
      assert.equal(fast.counts.path, 1, 'every exact locator with a parent tries the whole-path lookup');
      const parents = uri.split('/').length - 2;
      // The parents' one lookup runs when the whole path was refused and there are two parents or more;
      // a parent link that resolves beneath the root opens its real directory in one more.
      const followed = uri.startsWith('/a/inside-link/') ? 1 : 0;
      assert.equal(fast.counts.one, (fast.counts.pathRefused === 1 && parents > 1 ? 1 : 0) + followed);
      assert.equal(parentsOnly.counts.one, (parents > 1 ? 1 : 0) + followed);
      assert.equal(openFdCount(), fds, 'every handle was closed');
      const text = JSON.stringify(withBoth);
      assert.ok(!text.includes('OUTSIDE SECRET'), text);
    });
  }

  it('a plain path opens no parent at all, and reads the file', () => {
    const { seam, counts } = counting(openat2?.fs as SurfaceFs);
    const result = acquireDirect(root, '/a/b/c/d/f.txt', 'exact', {}, seam);
    assert.equal(result.entries[0]?.content, 'deep inside');
    assert.deepEqual(counts, { path: 1, pathRefused: 0, one: 0, oneRefused: 0, each: 0 });
  });

  it('without the whole-path lookup, a plain path opens its parents in one lookup', () => {
    const { seam, counts } = counting(openat2?.fs as SurfaceFs, 'path');
    const result = acquireDirect(root, '/a/b/c/d/f.txt', 'exact', {}, seam);
    assert.equal(result.entries[0]?.content, 'deep inside');
    assert.deepEqual(counts, { path: 0, pathRefused: 0, one: 1, oneRefused: 0, each: 0 });
  });

  it('a link as the file’s own name is refused by the whole-path lookup, then followed beneath the root', () => {
    const { seam, counts } = counting(openat2?.fs as SurfaceFs);
    const result = acquireDirect(root, '/a/b/c/f-link', 'exact', {}, seam);
    assert.equal(result.entries[0]?.content, 'inside');
    assert.equal(result.entries[0]?.via, '/a/b/c/f-link -> f.txt');
    // The link's resolution beneath the root (for `via`) walks its three parents one at a time.
    assert.deepEqual(counts, { path: 1, pathRefused: 1, one: 1, oneRefused: 0, each: 3 });
  });

  it('a parent link beneath the root is followed, and the entry names it', () => {
    const result = acquireDirect(root, '/a/inside-link/c/f.txt', 'exact', {}, openat2?.fs as SurfaceFs);
    assert.deepEqual(
      result.entries.map((entry) => [entry.uri, entry.content, entry.via]),
      [['/a/inside-link/c/f.txt', 'inside', '/a/inside-link -> b']],
    );
    assert.deepEqual(result.gaps, []);
  });

  it('a symlinked parent makes both lookups refuse; the walk one at a time finds and names the link', () => {
    const { seam, counts } = counting(openat2?.fs as SurfaceFs);
    const result = acquireDirect(root, '/a/outside-link/c/f.txt', 'exact', {}, seam);
    // Two by the walk one at a time (`a`, then the link, refused), one by the link's resolution (`a`).
    assert.deepEqual(counts, { path: 1, pathRefused: 1, one: 1, oneRefused: 1, each: 3 });
    assert.deepEqual(result.entries, []);
    assert.deepEqual(
      result.gaps.map((gap) => [gap.reason, gap.uri]),
      [['link_not_followed', '/a/outside-link/c/f.txt']],
    );
  });

  it('one parent: the whole path in one lookup; without it, no parents’ lookup (nothing to save)', () => {
    const whole = counting(openat2?.fs as SurfaceFs);
    const result = acquireDirect(root, '/a/file', 'exact', {}, whole.seam);
    assert.equal(result.entries[0]?.content, 'a file where a directory would be');
    assert.deepEqual(whole.counts, { path: 1, pathRefused: 0, one: 0, oneRefused: 0, each: 0 });
    const { seam, counts } = counting(openat2?.fs as SurfaceFs, 'path');
    assert.deepEqual(acquireDirect(root, '/a/file', 'exact', {}, seam).entries, result.entries);
    assert.deepEqual(counts, { path: 0, pathRefused: 0, one: 0, oneRefused: 0, each: 1 });
  });

  it('the seam refuses names it cannot compose (empty, holding "/" or NUL) and parents it did not open', () => {
    const seam = openat2?.fs as SurfaceFs;
    const rootFd = seam.openRoot(fs.realpathSync(root));
    try {
      const whole = seam.openPathBeneath?.bind(seam);
      assert.ok(whole !== undefined);
      for (const names of [['a', ''], ['a/b'], ['a', 'file\0'], [], ['..', 'root', 'a', 'file']]) {
        assert.equal(
          whole(
            rootFd,
            names.map((name) => Buffer.from(name)),
          ),
          undefined,
          JSON.stringify(names),
        );
      }
      const strayRoot = fs.openSync(root, 'r');
      try {
        assert.equal(
          whole(strayRoot, [Buffer.from('a'), Buffer.from('file')]),
          undefined,
          'not a handle it opened',
        );
      } finally {
        fs.closeSync(strayRoot);
      }
      const file = whole(rootFd, [Buffer.from('a'), Buffer.from('file')]);
      assert.ok(file !== undefined);
      assert.ok(seam.provenInside(file), 'the kernel proved it beneath the root');
      seam.close(file);
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
});
