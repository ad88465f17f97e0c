import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { DirectoryListing, ListedEntry } from '../../../src/sources/confined-fs/file-stat.js';
import {
  type Getdents,
  getdentsListing,
  loadGetdents,
  loadGetdentsCall,
} from '../../../src/sources/confined-fs/getdents-listing.js';
import { loadOpenat2 } from '../../../src/sources/confined-fs/openat2.js';
import { openat2SurfaceFs } from '../../../src/sources/confined-fs/openat2-surface-fs.js';
import { sampleSize } from '../../support/sample-size.js';
import { recordingFs } from '../support/recording-fs.js';
import { acquireDirect, buildTree, mkfifo, removeDir, tempDir } from '../support/trees.js';

/**
 * The openat2 seam lists a directory handle with getdents64 through koffi. It must return exactly what
 * Node's own listing returns (names as bytes, the same types), skip only `.` and `..`, and stay bounded:
 * one call reads one buffer, so the entry budget can stop a huge directory long before its end.
 */

const open = loadGetdents();
const call = loadGetdentsCall();

function drain(listing: DirectoryListing): ListedEntry[] {
  const out: ListedEntry[] = [];
  try {
    for (let entry = listing.readSync(); entry !== null; entry = listing.readSync()) out.push(entry);
  } finally {
    listing.closeSync();
  }
  return out;
}

const kind = (entry: Omit<ListedEntry, 'name'>) =>
  [
    entry.isFile(),
    entry.isDirectory(),
    entry.isSymbolicLink(),
    entry.isFIFO(),
    entry.isSocket(),
    entry.isCharacterDevice(),
    entry.isBlockDevice(),
  ].join();

/** File systems whose listings carry each name's type (d_type), so getdents64 and Node's readdir agree. */
const TYPED_LISTINGS = new Set([0xef53 /* ext2/3/4 */, 0x01021994 /* tmpfs */, 0x9123683e /* btrfs */]);

it('is available wherever koffi and openat2 are (a listing that failed its probe is never silent here)', (t) => {
  // The probe against Node's listing turns a wrong listing into the fs.Dir fallback: correct, but every test
  // below would then be skipped. Where the openat2 seam loads, getdents64 must load too — on a file system
  // that reports types: where d_type is unknown (XFS without ftype, some FUSE mounts) Node looks each type up
  // and getdents64 cannot, so the probe rightly refuses it.
  if (!loadOpenat2().available) return t.skip('openat2 is not available here');
  const probed = new URL('../../../src/sources/local-file/', import.meta.url).pathname;
  const type = Number(fs.statfsSync(probed).type);
  if (!TYPED_LISTINGS.has(type))
    return t.skip(`the probe's directory is on a file system of type 0x${type.toString(16)}`);
  assert.notEqual(open, undefined, 'getdents64 failed its probe against Node');
});

describe('getdents64 listing of a directory handle', {
  skip: open === undefined ? 'getdents64 through koffi is unavailable here' : false,
}, () => {
  let root: string;
  before(() => {
    root = tempDir();
    buildTree(root, { 'a.txt': 'a', '.hidden': 'h', '..dots': 'd', sub: { dir: {} } });
    fs.symlinkSync('/etc/passwd', path.join(root, 'link'));
    mkfifo(path.join(root, 'fifo'));
    fs.writeFileSync(Buffer.concat([Buffer.from(`${root}/`), Buffer.from([0xe9, 0xff, 0x2e, 0x74])]), 'x');
    fs.writeFileSync(path.join(root, 'n'.repeat(255)), 'long');
  });
  after(() => removeDir(root));

  it('returns the names and types Node lists, as bytes, without . and ..', () => {
    const fd = fs.openSync(root, 'r');
    let ours: string[];
    try {
      ours = drain((open as NonNullable<typeof open>)(fd)).map(
        (entry) => `${entry.name.toString('hex')} ${kind(entry)}`,
      );
    } finally {
      fs.closeSync(fd);
    }
    const dir = fs.opendirSync(root, { encoding: 'buffer' as BufferEncoding });
    const node: string[] = [];
    for (let dirent = dir.readSync(); dirent !== null; dirent = dir.readSync()) {
      node.push(`${(dirent.name as unknown as Buffer).toString('hex')} ${kind(dirent)}`);
    }
    dir.closeSync();
    assert.equal(ours.length, 8);
    assert.deepEqual(ours.sort(), node.sort());
  });

  it('a failed call surfaces with the errno name as its code (a closed handle: EBADF)', () => {
    const fd = fs.openSync(root, 'r');
    fs.closeSync(fd);
    const listing = (open as NonNullable<typeof open>)(fd);
    try {
      assert.throws(() => listing.readSync(), { code: 'EBADF' });
    } finally {
      listing.closeSync();
    }
  });

  // 20,000 entries in the heavy lane (getdents-listing.full-samples.heavy.test.ts), an eighth in npm test.
  const entries = sampleSize(20_000);
  it(`reads one buffer per call: the first entry of ${entries.toLocaleString('en')} costs one call of at most 32 KiB`, () => {
    const big = tempDir();
    try {
      for (let i = 0; i < entries; i++) fs.writeFileSync(path.join(big, `file-${i}`), '');
      const calls: number[] = [];
      const counting: Getdents = (fd, buffer, length) => {
        const count = (call as Getdents)(fd, buffer, length);
        calls.push(count);
        return count;
      };
      const fd = fs.openSync(big, 'r');
      try {
        const listing = getdentsListing(fd, counting);
        assert.notEqual(listing.readSync(), null);
        assert.equal(calls.length, 1);
        assert.ok((calls[0] as number) <= 32 * 1024 && (calls[0] as number) > 0);
        let rest = 1;
        while (listing.readSync() !== null) rest++;
        listing.closeSync();
        assert.equal(rest, entries);
        // Every call but the last (0, the end) returned a bounded buffer: a record here takes at least 32
        // bytes (19 of header, "file-0" and its NUL, aligned to 8), so 32 KiB holds at most 1,024 of them.
        assert.ok(calls.length >= Math.ceil(entries / 1024) + 1, `${calls.length} calls`);
        assert.equal(calls[calls.length - 1], 0);
      } finally {
        fs.closeSync(fd);
      }
    } finally {
      removeDir(big);
    }
  });

  it('the openat2 seam lists through it, and places a proven directory only after its listing', (t) => {
    const loaded = loadOpenat2();
    if (!loaded.available) {
      t.skip(`openat2 unavailable: ${loaded.reason}`);
      return;
    }
    const tree = tempDir();
    try {
      buildTree(tree, { a: { dir: { 'x.txt': 'x', b: { dir: { 'y.txt': 'y' } } } }, 'z.txt': 'z' });
      const { fs: seam, recording } = recordingFs({}, openat2SurfaceFs(loaded.binding));
      const result = acquireDirect(tree, '/**', 'glob', {}, seam);
      assert.deepEqual(
        result.entries.map((entry) => entry.uri),
        ['/a/b/y.txt', '/a/x.txt', '/z.txt'],
      );
      assert.equal(result.acquisition, 'complete');
      // The root's own path once, then one check per listed directory below the root (after listing):
      // no check before listing a kernel-proven directory, none for kernel-proven regular files.
      assert.equal(recording.calls.filter((c) => c.op === 'handlePath').length, 1 + 2);
      assert.equal(recording.listed.length, 3);
    } finally {
      removeDir(tree);
    }
  });
});
