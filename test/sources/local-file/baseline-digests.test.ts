import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { checkManifest, type Manifest } from '../../../src/models/manifest.js';
import { nodeSurfaceFs } from '../../../src/sources/confined-fs/surface-fs.js';
import { chooseSurfaceFs, openat2Unavailable } from '../../../src/sources/confined-fs/surface-fs-choice.js';
import { type ClockMark, markFileSystemClock } from '../../../src/sources/file-system-clock.js';
import { acquireSync } from '../../../src/sources/local-file/acquire-sync.js';
import { CLEAN_MARGIN_MS } from '../../../src/sources/local-file/baseline-digests.js';
import { DEFAULT_LIMITS } from '../../../src/sources/local-file/limits.js';
import { LocalFileSurfaceSource } from '../../../src/sources/local-file-source.js';
import { diffManifests } from '../../../src/verdicts/diff-manifests.js';
import { removeDir, tempDir } from '../support/trees.js';

/**
 * Digest carry-over (issue 11, baseline-digests.ts): the final manifest reuses a baseline digest only for a
 * file whose stat key is unchanged and whose ctime is older than the clean moment. Each attack below is
 * an agent trying to make a changed file look untouched; each must still be read and seen modified.
 */

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const FILES = ['a.txt', 'b.txt', 'sub/c.txt', 'sub/deep/d.txt'];

/**
 * A clean moment strictly after every file's ctime, as the harness takes it: the tree is not written
 * while waiting, and the file system's clock advances by itself (a tick is at most a few ms).
 */
async function markAfterTree(root: string, clockDir: string): Promise<ClockMark> {
  const newest = Math.max(...FILES.map((name) => fs.lstatSync(path.join(root, name)).ctimeMs));
  for (let tries = 0; tries < 2000; tries++) {
    const mark = markFileSystemClock(clockDir);
    if (mark.ctimeMs > newest + CLEAN_MARGIN_MS) return mark;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error('the file-system clock did not advance');
}

function entry(manifest: Manifest, uri: string) {
  return manifest.entries.find((e) => e.uri === uri);
}

describe('digest carry-over', () => {
  let root: string;
  let clockDir: string;
  let source: LocalFileSurfaceSource;
  beforeEach(() => {
    root = tempDir();
    clockDir = tempDir();
    for (const name of FILES) {
      fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
      fs.writeFileSync(path.join(root, name), `content of ${name}\n`);
    }
    source = new LocalFileSurfaceSource({ root });
  });
  afterEach(async () => {
    await source.close();
    removeDir(root);
    removeDir(clockDir);
  });

  it('control: an untouched tree carries every digest, reads no file and yields the same entries', async () => {
    const baseline = await source.acquireManifest();
    const mark = await markAfterTree(root, clockDir);
    const final = await source.acquireManifest({ reuseDigestsFrom: { baseline, mark } });
    assert.deepEqual(final.entries, baseline.entries);
    const stats = final.metadata.stats as Record<string, number>;
    assert.equal(stats.digestsCarried, FILES.length);
    assert.equal(stats.filesRead, 0);
    assert.equal(stats.bytesRead, 0);
    assert.deepEqual(final.metadata.carryOver, {
      baselineTakenAt: baseline.takenAt,
      cleanBefore: new Date(Math.floor(mark.ctimeMs)).toISOString(),
      fileSystem: mark.fileSystem ?? `0x${mark.fileSystemType.toString(16)}`,
      carried: FILES.length,
      racy: 0,
      changed: 0,
    });
    const changes = diffManifests(baseline, final);
    assert.deepEqual(changes.changes, []);
    assert.equal(changes.coverage.complete, true);
    // The record is evidence like any other: it survives a round trip through JSON unchanged.
    assert.deepEqual(checkManifest(JSON.parse(JSON.stringify(final))), final);
    // Without carry-over every file is read: the counter is 0 and nothing says otherwise.
    const plain = await source.acquireManifest();
    assert.equal((plain.metadata.stats as Record<string, number>).digestsCarried, 0);
    assert.equal((plain.metadata.stats as Record<string, number>).filesRead, FILES.length);
    assert.equal(plain.metadata.carryOver, undefined);
  });

  it('sees a rewrite that keeps the size and restores the mtime (touch -r)', async () => {
    const baseline = await source.acquireManifest();
    const mark = await markAfterTree(root, clockDir);
    const file = path.join(root, 'a.txt');
    const before = fs.lstatSync(file);
    const reference = path.join(clockDir, 'reference');
    execFileSync('touch', ['-r', file, reference]);
    fs.writeFileSync(file, 'CONTENT OF a.txt\n');
    execFileSync('touch', ['-r', reference, file]);
    const after = fs.lstatSync(file);
    // The attack as mounted: same inode, size, mode and mtime to the nanosecond as the baseline saw.
    assert.deepEqual(
      [after.ino, after.size, after.mode, after.mtimeMs],
      [before.ino, before.size, before.mode, before.mtimeMs],
    );
    const final = await source.acquireManifest({ reuseDigestsFrom: { baseline, mark } });
    assert.equal(entry(final, '/a.txt')?.sha256, sha('CONTENT OF a.txt\n'));
    assert.deepEqual(
      diffManifests(baseline, final).changes.map((change) => [change.uri, change.kind]),
      [['/a.txt', 'modified']],
    );
    const carryOver = final.metadata.carryOver as Record<string, number>;
    assert.deepEqual([carryOver.carried, carryOver.changed], [FILES.length - 1, 1]);
  });

  it('sees a file replaced by another inode with the same size, mode and mtime', async () => {
    const baseline = await source.acquireManifest();
    const mark = await markAfterTree(root, clockDir);
    const file = path.join(root, 'sub/c.txt');
    const before = fs.lstatSync(file);
    const replacement = path.join(root, 'sub/.c.txt.new');
    fs.writeFileSync(replacement, 'CONTENT OF sub/c.txt\n', { mode: before.mode & 0o7777 });
    fs.chmodSync(replacement, before.mode & 0o7777);
    execFileSync('touch', ['-r', file, replacement]);
    fs.renameSync(replacement, file);
    const after = fs.lstatSync(file);
    assert.notEqual(after.ino, before.ino);
    assert.deepEqual([after.size, after.mode, after.mtimeMs], [before.size, before.mode, before.mtimeMs]);
    const final = await source.acquireManifest({ reuseDigestsFrom: { baseline, mark } });
    assert.equal(entry(final, '/sub/c.txt')?.sha256, sha('CONTENT OF sub/c.txt\n'));
    assert.deepEqual(
      diffManifests(baseline, final).changes.map((change) => [change.uri, change.kind]),
      [['/sub/c.txt', 'modified']],
    );
  });

  it('sees a file deleted and recreated with the same size and mtime (even on a reused inode)', async () => {
    const baseline = await source.acquireManifest();
    const mark = await markAfterTree(root, clockDir);
    const file = path.join(root, 'sub/deep/d.txt');
    const reference = path.join(clockDir, 'reference');
    execFileSync('touch', ['-r', file, reference]);
    fs.rmSync(file);
    fs.writeFileSync(file, 'CONTENT OF sub/deep/d.txt\n');
    execFileSync('touch', ['-r', reference, file]);
    const final = await source.acquireManifest({ reuseDigestsFrom: { baseline, mark } });
    assert.equal(entry(final, '/sub/deep/d.txt')?.sha256, sha('CONTENT OF sub/deep/d.txt\n'));
    assert.deepEqual(
      diffManifests(baseline, final).changes.map((change) => [change.uri, change.kind]),
      [['/sub/deep/d.txt', 'modified']],
    );
  });

  it('sees a chmod alone (ctime moves) and reports it as a mode change', async () => {
    const baseline = await source.acquireManifest();
    const mark = await markAfterTree(root, clockDir);
    fs.chmodSync(path.join(root, 'b.txt'), 0o755);
    const final = await source.acquireManifest({ reuseDigestsFrom: { baseline, mark } });
    assert.deepEqual(
      diffManifests(baseline, final).changes.map((change) => [change.uri, change.kind]),
      [['/b.txt', 'mode_changed']],
    );
    assert.equal((final.metadata.carryOver as Record<string, number>).changed, 1);
  });

  it('declines carry-over for a baseline this source did not take (another source, or a stored one)', async () => {
    const other = new LocalFileSurfaceSource({ root });
    const foreign = await other.acquireManifest();
    await other.close();
    const stored = checkManifest(JSON.parse(JSON.stringify(await source.acquireManifest())));
    const mark = await markAfterTree(root, clockDir);
    for (const baseline of [foreign, stored]) {
      const final = await source.acquireManifest({ reuseDigestsFrom: { baseline, mark } });
      assert.equal((final.metadata.stats as Record<string, number>).digestsCarried, 0);
      assert.equal((final.metadata.stats as Record<string, number>).filesRead, FILES.length);
      assert.equal(
        (final.metadata.carryOver as Record<string, string>).declined,
        'the baseline was not taken by this source',
      );
    }
  });

  it('declines carry-over on a file system whose ctime the local kernel does not keep', async () => {
    const baseline = await source.acquireManifest();
    const mark = { ...(await markAfterTree(root, clockDir)), fileSystem: null, fileSystemType: 0x65735546 };
    const final = await source.acquireManifest({ reuseDigestsFrom: { baseline, mark } });
    assert.equal((final.metadata.stats as Record<string, number>).digestsCarried, 0);
    assert.match(
      String((final.metadata.carryOver as Record<string, string>).declined),
      /statfs type 0x65735546\) does not keep ctime by this kernel's clock/,
    );
  });

  it('declines carry-over when the clock went back since the mark (stepped)', async () => {
    const baseline = await source.acquireManifest();
    const real = await markAfterTree(root, clockDir);
    // As if a minute of monotonic time had passed since the mark while the real clock moved on by less.
    const mark = { ...real, monotonicMs: real.monotonicMs - 60_000 };
    const final = await source.acquireManifest({ reuseDigestsFrom: { baseline, mark } });
    assert.equal((final.metadata.stats as Record<string, number>).digestsCarried, 0);
    assert.match(
      String((final.metadata.carryOver as Record<string, string>).declined),
      /the clock went back by about \d+ ms since the baseline/,
    );
  });

  it('carries nothing from files on another device than the mark', async () => {
    const baseline = await source.acquireManifest();
    const mark = { ...(await markAfterTree(root, clockDir)) };
    mark.dev += 1;
    // The clock re-check runs in the same directory, which is on mark.dev - 1: declined before any file.
    const final = await source.acquireManifest({ reuseDigestsFrom: { baseline, mark } });
    assert.equal((final.metadata.stats as Record<string, number>).digestsCarried, 0);
    assert.equal(
      (final.metadata.carryOver as Record<string, string>).declined,
      'the marker directory moved to another device',
    );
  });
});

for (const kind of ['procfs', 'openat2'] as const) {
  const chosen = chooseSurfaceFs(kind);
  describe(`racily clean files (a write in the same clock tick as the clean moment), ${kind} seam`, {
    skip: chosen.ok ? false : `openat2 unavailable: ${openat2Unavailable()}`,
  }, () => {
    let root: string;
    beforeEach(() => {
      root = tempDir();
      fs.writeFileSync(path.join(root, 'f.txt'), 'original\n');
    });
    afterEach(() => removeDir(root));

    /**
     * The walk itself, given a carry request whose stat key is the file's *current* one — as if the
     * baseline had read it in the same tick as a later write, so the key cannot tell — and a clean moment
     * injected relative to the file's ctime.
     */
    function finalWalk(cleanBeforeMs: (ctimeMs: number) => number, devOffset = 0) {
      const stat = fs.lstatSync(path.join(root, 'f.txt'));
      const keys = Float64Array.of(stat.dev, stat.ino, stat.size, stat.mtimeMs, stat.ctimeMs, stat.mode);
      const outcome = acquireSync(
        {
          root,
          uri: '/**',
          match: 'glob',
          limits: { ...DEFAULT_LIMITS },
          mode: 'manifest',
          reuse: {
            uris: ['/f.txt'],
            keys,
            cleanBeforeMs: cleanBeforeMs(stat.ctimeMs),
            dev: stat.dev + devOffset,
          },
        },
        chosen.ok ? chosen.fs : nodeSurfaceFs,
        () => false,
      );
      if (outcome.kind !== 'done') throw new Error('cancelled');
      return outcome.result;
    }

    it('re-reads a file whose ctime equals the clean moment', () => {
      fs.writeFileSync(path.join(root, 'f.txt'), 'modified\n');
      const result = finalWalk((ctimeMs) => ctimeMs);
      assert.deepEqual(result.reuseCounts, { carried: 0, racy: 1, changed: 0 });
      assert.equal(result.stats.filesRead, 1);
      assert.deepEqual(result.manifest?.[0], {
        uri: '/f.txt',
        type: 'file',
        sizeBytes: 9,
        sha256: sha('modified\n'),
        mode: fs.lstatSync(path.join(root, 'f.txt')).mode & 0o7777,
        linkTarget: null,
      });
    });

    it('re-reads a file whose ctime is after the clean moment', () => {
      const result = finalWalk((ctimeMs) => ctimeMs - 1);
      assert.deepEqual(result.reuseCounts, { carried: 0, racy: 1, changed: 0 });
      assert.equal(result.stats.filesRead, 1);
    });

    it('re-reads a file on another device than the clean moment was read on', () => {
      const result = finalWalk((ctimeMs) => ctimeMs + CLEAN_MARGIN_MS + 1, 1);
      assert.deepEqual(result.reuseCounts, { carried: 0, racy: 0, changed: 1 });
      assert.equal(result.stats.filesRead, 1);
    });

    it('re-reads a file whose ctime is within the margin before the clean moment', () => {
      const result = finalWalk((ctimeMs) => ctimeMs + CLEAN_MARGIN_MS);
      assert.deepEqual(result.reuseCounts, { carried: 0, racy: 1, changed: 0 });
    });

    it('control: a little later the same file would be carried (the test can see a stale digest)', () => {
      fs.writeFileSync(path.join(root, 'f.txt'), 'modified\n');
      const result = finalWalk((ctimeMs) => ctimeMs + CLEAN_MARGIN_MS + 1);
      assert.deepEqual(result.reuseCounts, { carried: 1, racy: 0, changed: 0 });
      assert.equal(result.stats.filesRead, 0);
      assert.deepEqual(result.manifest, []);
      assert.deepEqual([...(result.reused ?? [])], [0]);
    });

    it("hands its stat keys over in shared memory, the carried file's key being the baseline's", () => {
      const stat = fs.lstatSync(path.join(root, 'f.txt'));
      const result = finalWalk((ctimeMs) => ctimeMs + CLEAN_MARGIN_MS + 1);
      assert.deepEqual(result.reuseCounts, { carried: 1, racy: 0, changed: 0 });
      // Shared: it crosses to the caller's thread (and on to a later final manifest's) without a copy.
      assert.ok(result.statKeys?.buffer instanceof SharedArrayBuffer);
      assert.deepEqual(
        [...(result.statKeys ?? [])],
        [stat.dev, stat.ino, stat.size, stat.mtimeMs, stat.ctimeMs, stat.mode],
      );
      // A file read (not carried: the clean moment is on another device) gets the key of the stat it
      // was read under, in the same shared column.
      fs.writeFileSync(path.join(root, 'f.txt'), 'modified, longer\n');
      const now = fs.lstatSync(path.join(root, 'f.txt'));
      const reread = finalWalk((ctimeMs) => ctimeMs + CLEAN_MARGIN_MS + 1, 1);
      assert.deepEqual(reread.reuseCounts, { carried: 0, racy: 0, changed: 1 });
      assert.ok(reread.statKeys?.buffer instanceof SharedArrayBuffer);
      assert.deepEqual(
        [...(reread.statKeys ?? [])],
        [now.dev, now.ino, now.size, now.mtimeMs, now.ctimeMs, now.mode],
      );
    });
  });
}
