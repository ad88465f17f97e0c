import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { checkManifest } from '../../../src/models/manifest.js';
import { nodeSurfaceFs, type SurfaceFs } from '../../../src/sources/confined-fs/surface-fs.js';
import { markFileSystemClock } from '../../../src/sources/file-system-clock.js';
import { acquireSync } from '../../../src/sources/local-file/acquire-sync.js';
import { CLEAN_MARGIN_MS } from '../../../src/sources/local-file/baseline-digests.js';
import { DEFAULT_LIMITS, type SourceLimits } from '../../../src/sources/local-file/limits.js';
import { LocalFileSurfaceSource } from '../../../src/sources/local-file-source.js';
import { diffManifests } from '../../../src/verdicts/diff-manifests.js';
import { recordingFs } from '../support/recording-fs.js';
import { removeDir, tempDir } from '../support/trees.js';

/** Manifest mode (SPEC §12): every entry under the root, through the source's own confined walk. */

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

function manifestDirect(
  root: string,
  limits: Partial<SourceLimits> = {},
  surfaceFs: SurfaceFs = nodeSurfaceFs,
) {
  const outcome = acquireSync(
    { root, uri: '/**', match: 'glob', limits: { ...DEFAULT_LIMITS, ...limits }, mode: 'manifest' },
    surfaceFs,
    () => false,
  );
  if (outcome.kind !== 'done') throw new Error('cancelled');
  return outcome.result;
}

describe('manifest of a tree', () => {
  let root: string;
  before(() => {
    root = tempDir();
    fs.mkdirSync(path.join(root, 'src/deep'), { recursive: true, mode: 0o755 });
    fs.chmodSync(path.join(root, 'src'), 0o750);
    fs.writeFileSync(path.join(root, 'README.md'), 'hello');
    fs.chmodSync(path.join(root, 'README.md'), 0o644);
    fs.writeFileSync(path.join(root, 'src/run.sh'), '#!/bin/sh\necho hi\n');
    fs.chmodSync(path.join(root, 'src/run.sh'), 0o755);
    fs.writeFileSync(path.join(root, 'src/deep/empty.txt'), '');
    fs.chmodSync(path.join(root, 'src/deep/empty.txt'), 0o600);
    fs.symlinkSync('../README.md', path.join(root, 'src/readme-link'));
    fs.symlinkSync('/etc', path.join(root, 'etc-link'));
    fs.symlinkSync('nowhere', path.join(root, 'dangling'));
    execFileSync('mkfifo', ['-m', '0640', path.join(root, 'pipe')]);
  });
  after(() => removeDir(root));

  it('lists every file, directory, symlink and other object with type, size, digest, mode and target', () => {
    const result = manifestDirect(root);
    assert.equal(result.acquisition, 'complete');
    assert.deepEqual(result.gaps, []);
    assert.deepEqual(result.entries, []);
    const linkSize = (name: string) => fs.lstatSync(path.join(root, name)).size;
    assert.deepEqual(result.manifest, [
      { uri: '/README.md', type: 'file', sizeBytes: 5, sha256: sha('hello'), mode: 0o644, linkTarget: null },
      {
        uri: '/dangling',
        type: 'symlink',
        sizeBytes: linkSize('dangling'),
        sha256: null,
        mode: 0o777,
        linkTarget: 'nowhere',
      },
      {
        uri: '/etc-link',
        type: 'symlink',
        sizeBytes: linkSize('etc-link'),
        sha256: null,
        mode: 0o777,
        linkTarget: '/etc',
      },
      { uri: '/pipe', type: 'other', sizeBytes: 0, sha256: null, mode: 0o640, linkTarget: null },
      { uri: '/src', type: 'directory', sizeBytes: 0, sha256: null, mode: 0o750, linkTarget: null },
      { uri: '/src/deep', type: 'directory', sizeBytes: 0, sha256: null, mode: 0o755, linkTarget: null },
      {
        uri: '/src/deep/empty.txt',
        type: 'file',
        sizeBytes: 0,
        sha256: sha(''),
        mode: 0o600,
        linkTarget: null,
      },
      {
        uri: '/src/readme-link',
        type: 'symlink',
        sizeBytes: linkSize('src/readme-link'),
        sha256: null,
        mode: 0o777,
        linkTarget: '../README.md',
      },
      {
        uri: '/src/run.sh',
        type: 'file',
        sizeBytes: 18,
        sha256: sha('#!/bin/sh\necho hi\n'),
        mode: 0o755,
        linkTarget: null,
      },
    ]);
  });

  it('never follows a symlink, never opens a FIFO and never lists outside the root', () => {
    const { fs: recording, recording: calls } = recordingFs();
    manifestDirect(root, {}, recording);
    const opened = calls.calls
      .filter((call) => call.op === 'openPathAt')
      .map((call) => path.basename(call.where ?? ''));
    assert.deepEqual(opened.sort(), ['README.md', 'empty.txt', 'run.sh']);
    assert.ok(calls.listed.every((dir) => dir === root || dir.startsWith(`${root}/`)));
    assert.equal(calls.opened.length, 3, 'three files opened for reading');
    assert.equal(calls.openFds.size, 0, 'every handle closed');
  });

  it('through the source, returns a valid, frozen Manifest record labelled with its surface', async () => {
    const source = new LocalFileSurfaceSource({ root });
    const manifest = await source.acquireManifest({ surface: 'home' });
    assert.equal(manifest.surface, 'home');
    assert.equal(manifest.acquisition, 'complete');
    assert.equal(manifest.entries.length, 9);
    assert.ok(Object.isFrozen(manifest.entries[0]));
    assert.deepEqual(checkManifest(JSON.parse(JSON.stringify(manifest))), manifest);
    await source.close();
  });
});

describe('manifest gaps', () => {
  let root: string;
  before(() => {
    root = tempDir();
    fs.mkdirSync(path.join(root, 'a'));
    fs.mkdirSync(path.join(root, 'b'));
    fs.writeFileSync(path.join(root, 'a/one.txt'), '1111111111');
    fs.writeFileSync(path.join(root, 'b/two.txt'), '2222222222');
    fs.writeFileSync(path.join(root, 'three.txt'), '3');
  });
  after(() => removeDir(root));

  it('stops at maxFiles+1 entries with file_limit_exceeded (directories do not count)', () => {
    const result = manifestDirect(root, { maxFiles: 2 });
    assert.equal(result.acquisition, 'partial');
    assert.deepEqual(
      result.gaps.map((gap) => [gap.reason, gap.uri]),
      [['file_limit_exceeded', '/three.txt']],
    );
    assert.deepEqual(
      result.manifest?.map((entry) => entry.uri),
      ['/a', '/a/one.txt', '/b', '/b/two.txt'],
    );
  });

  it('keeps a file the read budget cut short, without a digest, and names the gap', () => {
    const result = manifestDirect(root, { maxReadBytes: 15 });
    assert.deepEqual(
      result.gaps.map((gap) => [gap.reason, gap.uri]),
      [
        ['read_limit_exceeded', '/b/two.txt'],
        ['read_limit_exceeded', '/three.txt'],
      ],
    );
    const two = result.manifest?.find((entry) => entry.uri === '/b/two.txt');
    assert.deepEqual(two, {
      uri: '/b/two.txt',
      type: 'file',
      sizeBytes: 10,
      sha256: null,
      mode: fs.statSync(path.join(root, 'b/two.txt')).mode & 0o7777,
      linkTarget: null,
    });
  });

  it('records a directory whose listing fails as listing_failed, with the directory itself listed', () => {
    const failing: SurfaceFs = {
      ...nodeSurfaceFs,
      openListing: (dirFd) => {
        if (nodeSurfaceFs.handlePath(dirFd).toString().endsWith('/b')) {
          throw Object.assign(new Error('denied'), { code: 'EACCES' });
        }
        return nodeSurfaceFs.openListing(dirFd);
      },
    };
    const result = manifestDirect(root, {}, failing);
    assert.equal(result.acquisition, 'partial');
    assert.deepEqual(
      result.gaps.map((gap) => [gap.reason, gap.uri]),
      [['listing_failed', '/b']],
    );
    assert.deepEqual(
      result.manifest?.map((entry) => entry.uri),
      ['/a', '/a/one.txt', '/b', '/three.txt'],
    );
  });

  it('reports an unavailable root with no entries', async () => {
    const source = new LocalFileSurfaceSource({ root: path.join(root, 'missing') });
    const manifest = await source.acquireManifest();
    assert.equal(manifest.acquisition, 'unavailable');
    assert.deepEqual(manifest.coverage.reasons, ['surface_root_unavailable']);
    assert.deepEqual(manifest.entries, []);
    await source.close();
  });
});

describe('manifest through the source, in batches', () => {
  let root: string;
  before(() => {
    root = tempDir();
    // More entries than one batch (1,000), with names whose walk order is not uri order ('a.b' sorts
    // before 'a/…' as a uri but after 'a' as a listed name).
    for (const dir of ['a', 'a.b', 'a-c', 'z']) {
      fs.mkdirSync(path.join(root, dir));
      for (let i = 0; i < 700; i++) fs.writeFileSync(path.join(root, dir, `f${i}.txt`), `${dir} ${i}\n`);
    }
    fs.writeFileSync(path.join(root, 'a.txt'), 'top\n');
  });
  after(() => removeDir(root));

  it('returns exactly the entries of the walk itself, in uri order, whatever batch they arrived in', async () => {
    const limits = { maxFiles: 5_000, maxListedEntries: 5_000 };
    const direct = manifestDirect(root, limits);
    assert.equal(direct.acquisition, 'complete');
    const source = new LocalFileSurfaceSource({ root, ...limits });
    try {
      const manifest = await source.acquireManifest();
      assert.equal(manifest.acquisition, 'complete');
      assert.equal(manifest.entries.length, 4 * 701 + 1);
      assert.deepEqual(manifest.entries, direct.manifest);

      // Carried across batches: every untouched file keeps the baseline's entry, the one rewritten does not.
      const newest = Math.max(...manifest.entries.map((e) => fs.lstatSync(path.join(root, e.uri)).ctimeMs));
      let mark = markFileSystemClock(os.tmpdir());
      while (mark.ctimeMs <= newest + CLEAN_MARGIN_MS) {
        await new Promise((resolve) => setTimeout(resolve, 5));
        mark = markFileSystemClock(os.tmpdir());
      }
      fs.writeFileSync(path.join(root, 'a.b/f5.txt'), 'rewritten\n');
      const final = await source.acquireManifest({ reuseDigestsFrom: { baseline: manifest, mark } });
      assert.equal((final.metadata.stats as Record<string, number>).digestsCarried, 4 * 700);
      assert.deepEqual(
        diffManifests(manifest, final).changes.map((change) => [change.kind, change.uri]),
        [['modified', '/a.b/f5.txt']],
      );
      assert.deepEqual(final.entries, manifestDirect(root, limits).manifest);
    } finally {
      await source.close();
    }
  });
});

describe('a listed file swapped before its confined read (no lstat of the name first)', () => {
  // A manifest without carry-over takes a name the listing reports as a regular file straight to the
  // confined read; the checks that guard the read are the confined read's own (placement, type of the
  // handle before any read intent). Each test swaps the file between the listing and that read and
  // proves nothing outside the root is read, nothing but a regular file is opened for reading, and the
  // entry is then what the lstat of the name says (with the confined read's gap).
  let base: string;
  let root: string;
  beforeEach(() => {
    base = tempDir();
    root = path.join(base, 'ws');
    fs.mkdirSync(root);
    fs.writeFileSync(path.join(base, 'outside.txt'), 'OUTSIDE');
    fs.writeFileSync(path.join(root, 'a.txt'), 'aaa');
    fs.writeFileSync(path.join(root, 'swapped.txt'), 'inside');
    fs.writeFileSync(path.join(root, 'z.txt'), 'zzz');
  });
  afterEach(() => removeDir(base));

  /** A seam that runs `swap` once, just before the O_PATH open of `swapped.txt`. */
  function swapping(swap: (at: string) => void) {
    let done = false;
    return recordingFs({
      before: (op, args) => {
        if (done || op !== 'openPathAt' || (args[1] as Buffer).toString() !== 'swapped.txt') return;
        done = true;
        swap(path.join(root, 'swapped.txt'));
      },
    });
  }

  it('a link out of the root swapped in: never followed, nothing outside opened, the entry is the link', () => {
    const { fs: seam, recording } = swapping((at) => {
      fs.rmSync(at);
      fs.symlinkSync(path.join(base, 'outside.txt'), at);
    });
    const result = manifestDirect(root, {}, seam);
    // The name is opened without following it, so the link itself is what the manifest records, as
    // for a link that was there when the listing ran: no gap, no read.
    assert.deepEqual(result.gaps, []);
    const entry = result.manifest?.find((e) => e.uri === '/swapped.txt');
    assert.equal(entry?.type, 'symlink');
    assert.equal(entry?.linkTarget, path.join(base, 'outside.txt'));
    assert.ok(!recording.opened.some((file) => file.endsWith('outside.txt')), 'outside file never opened');
    assert.ok(!JSON.stringify(result).includes('OUTSIDE'));
    assert.equal(recording.openFds.size, 0);
  });

  it("a link to another file inside swapped in: recorded as the link, never as a file holding its target's digest", () => {
    // The attack: a name listed as a regular file, replaced by a link to a file inside the root before
    // its read. Followed, the manifest would say this name is a complete file holding a.txt's bytes.
    const { fs: seam, recording } = swapping((at) => {
      fs.rmSync(at);
      fs.symlinkSync('a.txt', at);
    });
    const result = manifestDirect(root, {}, seam);
    assert.deepEqual(result.gaps, []);
    assert.equal(result.acquisition, 'complete');
    const entry = result.manifest?.find((e) => e.uri === '/swapped.txt');
    assert.equal(entry?.type, 'symlink');
    assert.equal(entry?.sha256, null);
    assert.equal(entry?.linkTarget, 'a.txt');
    assert.equal(result.stats.candidates, 3, 'three entries counted once each');
    assert.equal(recording.openFds.size, 0);
  });

  it('a FIFO swapped in: never opened for reading, recorded as other', () => {
    const { fs: seam, recording } = swapping((at) => {
      fs.rmSync(at);
      execFileSync('mkfifo', [at]);
    });
    const result = manifestDirect(root, {}, seam);
    assert.deepEqual(result.gaps, []);
    assert.equal(result.manifest?.find((e) => e.uri === '/swapped.txt')?.type, 'other');
    assert.ok(!recording.opened.some((file) => file.endsWith('swapped.txt')), 'the FIFO never opened');
    assert.equal(recording.openFds.size, 0);
  });

  it('removed: no entry and no gap, the rest of the manifest intact', () => {
    const { fs: seam } = swapping((at) => fs.rmSync(at));
    const result = manifestDirect(root, {}, seam);
    assert.equal(result.acquisition, 'complete');
    assert.deepEqual(
      result.manifest?.map((e) => [e.uri, e.sha256]),
      [
        ['/a.txt', sha('aaa')],
        ['/z.txt', sha('zzz')],
      ],
    );
  });

  it('without a swap, the mode, size and key come from the handle and equal an lstat of the name', () => {
    fs.chmodSync(path.join(root, 'swapped.txt'), 0o640);
    const { fs: seam, recording } = recordingFs();
    const result = manifestDirect(root, {}, seam);
    const named = recording.calls.filter(
      (call) => (call.op === 'lstatAt' || call.op === 'entryStatAt') && call.where?.endsWith('.txt'),
    );
    assert.deepEqual(named, [], 'no listed regular file is lstat-ed by name');
    const at = result.manifest?.findIndex((e) => e.uri === '/swapped.txt') as number;
    const lstat = fs.lstatSync(path.join(root, 'swapped.txt'));
    assert.deepEqual(result.manifest?.[at], {
      uri: '/swapped.txt',
      type: 'file',
      sizeBytes: 6,
      sha256: sha('inside'),
      mode: 0o640,
      linkTarget: null,
    });
    const keys = Array.from((result.statKeys as Float64Array).subarray(at * 6, at * 6 + 6));
    assert.deepEqual(keys, [lstat.dev, lstat.ino, lstat.size, lstat.mtimeMs, lstat.ctimeMs, lstat.mode]);
  });
});
