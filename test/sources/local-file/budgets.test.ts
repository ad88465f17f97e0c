import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, it } from 'node:test';
import { NON_TEXT_PREFIX_BYTES } from '../../../src/models/observation.js';
import type { SurfaceFs } from '../../../src/sources/confined-fs/surface-fs.js';
import { recordingFs } from '../support/recording-fs.js';
import { describeEachSurfaceFs } from '../support/surface-fs-variants.js';
import {
  acquireDirect,
  buildTree,
  MTIME,
  removeDir,
  sha256Hex,
  tempDir,
  textEntry,
} from '../support/trees.js';

/** The four budgets of one acquisition and what a read keeps (SPEC §5), counted through the seam. */

describeEachSurfaceFs('maxFiles', (variant) => {
  let root: string;
  before(() => {
    root = tempDir();
    buildTree(root, {
      a: { dir: { '1.txt': '1', '2.txt': '2' } },
      b: { dir: { '3.txt': '3', '4.txt': '4' } },
      c: { dir: { '5.txt': '5' } },
    });
  });
  after(() => removeDir(root));

  it('stops enumeration at once at candidate maxFiles+1 with file_limit_exceeded', () => {
    const { fs, recording } = recordingFs({}, variant.fs);
    const result = acquireDirect(root, '/**', 'glob', { maxFiles: 3 }, fs);
    assert.equal(result.acquisition, 'partial');
    assert.deepEqual(result.entries, [
      textEntry('/a/1.txt', '1'),
      textEntry('/a/2.txt', '2'),
      textEntry('/b/3.txt', '3'),
    ]);
    assert.deepEqual(result.gaps, [
      {
        reason: 'file_limit_exceeded',
        uri: '/b/4.txt',
        detail: 'more than 3 files match; enumeration stopped here',
      },
    ]);
    // Nothing after the fourth candidate is touched: /b/4.txt is not opened, /c is never listed.
    assert.deepEqual(recording.listed, [root, path.join(root, 'a'), path.join(root, 'b')]);
    assert.ok(!recording.calls.some((call) => call.where?.endsWith('/4.txt') || call.where?.includes('/c')));
    assert.deepEqual(result.stats, {
      directoriesListed: 3,
      entriesExamined: 7,
      candidates: 4,
      filesRead: 3,
      bytesRead: 3,
    });
  });

  it('is complete when exactly maxFiles files match', () => {
    const result = acquireDirect(root, '/**', 'glob', { maxFiles: 5 }, variant.fs);
    assert.equal(result.acquisition, 'complete');
    assert.equal(result.entries.length, 5);
  });
});

describeEachSurfaceFs('maxListedEntries', (variant) => {
  let root: string;
  before(() => {
    root = tempDir();
    const wide: Record<string, string> = {};
    for (let i = 0; i < 10; i++) wide[`w${i}.txt`] = `w${i}`;
    buildTree(root, { a: { dir: { '1.txt': '1', '2.txt': '2' } }, b: { dir: wide } });
  });
  after(() => removeDir(root));

  it('discards the listing that exhausts the budget and reports listing_limit_exceeded', () => {
    // root: 2 entries, a: 2 entries, b: 10 entries; a budget of 8 runs out inside b.
    const { fs, recording } = recordingFs({}, variant.fs);
    const result = acquireDirect(root, '/**', 'glob', { maxListedEntries: 8 }, fs);
    assert.equal(result.acquisition, 'partial');
    assert.deepEqual(result.entries, [textEntry('/a/1.txt', '1'), textEntry('/a/2.txt', '2')]);
    assert.deepEqual(result.gaps, [
      { reason: 'listing_limit_exceeded', uri: '/b', detail: 'more than 8 directory entries examined' },
    ]);
    assert.equal(result.stats.entriesExamined, 9);
    // The entry that crossed the budget was the last one read from the listing; none of b's names was acted on.
    assert.equal(recording.listedNames.filter((name) => name.includes('/b/')).length, 5);
    assert.ok(!recording.calls.some((call) => call.op !== 'openListing' && call.where?.includes('/b/')));
  });

  it('still reads files already listed once the budget is spent, and lists no further directory', () => {
    const dir = tempDir();
    try {
      // Root lists 3 entries (a/, b/, z.txt); a lists 3 and exhausts a budget of 5; z.txt was already listed.
      buildTree(dir, {
        a: { dir: { '1.txt': '1', '2.txt': '2', '3.txt': '3' } },
        b: { dir: { '4.txt': '4' } },
        'z.txt': 'z',
      });
      const { fs, recording } = recordingFs({}, variant.fs);
      const result = acquireDirect(dir, '/**', 'glob', { maxListedEntries: 5 }, fs);
      assert.equal(result.acquisition, 'partial');
      assert.deepEqual(result.entries, [textEntry('/z.txt', 'z')]);
      assert.deepEqual(result.gaps, [
        { reason: 'listing_limit_exceeded', uri: '/a', detail: 'more than 5 directory entries examined' },
        {
          reason: 'listing_limit_exceeded',
          uri: '/b',
          detail: 'not listed: the budget of directory entries was already spent',
        },
      ]);
      assert.equal(recording.calls.filter((call) => call.op === 'openListing').length, 2);
    } finally {
      removeDir(dir);
    }
  });

  it('counts every entry examined, matching or not', () => {
    const result = acquireDirect(root, '/b/w1.*', 'glob', { maxListedEntries: 9 }, variant.fs);
    assert.deepEqual(
      result.gaps.map((gap) => gap.reason),
      ['listing_limit_exceeded'],
    );
    assert.deepEqual(result.entries, []);
    const enough = acquireDirect(root, '/b/w1.*', 'glob', { maxListedEntries: 10 }, variant.fs);
    assert.equal(enough.acquisition, 'complete');
    assert.deepEqual(enough.entries, [textEntry('/b/w1.txt', 'w1')]);
  });
});

describeEachSurfaceFs('maxReadBytes (shared across files)', (variant) => {
  let root: string;
  before(() => {
    root = tempDir();
    buildTree(root, {
      f: {
        dir: { '1.txt': '0123456789', '2.txt': 'abcdefghij', '3.txt': 'ABCDEFGHIJ', '4.txt': 'klmnopqrst' },
      },
      exact: { dir: { 'ten.txt': '0123456789' } },
    });
  });
  after(() => removeDir(root));

  it('spends one budget over all files: the file it runs out in has no digest and a truncated prefix', () => {
    const { fs, recording } = recordingFs({}, variant.fs);
    const result = acquireDirect(root, '/f/*', 'glob', { maxReadBytes: 25 }, fs);
    assert.equal(recording.bytesRead, 25);
    assert.equal(result.stats.bytesRead, 25);
    assert.equal(result.acquisition, 'partial');
    const cut = (uri: string, content: string) => ({
      uri,
      sizeBytes: 10,
      sha256: null,
      modifiedAt: MTIME.toISOString(),
      content,
      contentTruncated: true,
    });
    assert.deepEqual(result.entries, [
      textEntry('/f/1.txt', '0123456789'),
      textEntry('/f/2.txt', 'abcdefghij'),
      cut('/f/3.txt', 'ABCDE'),
      cut('/f/4.txt', ''),
    ]);
    assert.deepEqual(result.gaps, [
      { reason: 'read_limit_exceeded', uri: '/f/3.txt', detail: 'read 5 of 10 bytes' },
      { reason: 'read_limit_exceeded', uri: '/f/4.txt', detail: 'read 0 of 10 bytes' },
    ]);
  });

  it('proves in one read that a file ending exactly at the budget is complete (asks one byte more)', () => {
    const { fs, recording } = recordingFs({}, variant.fs);
    const result = acquireDirect(root, '/exact/ten.txt', 'exact', { maxReadBytes: 10 }, fs);
    assert.equal(result.acquisition, 'complete');
    assert.deepEqual(result.entries, [textEntry('/exact/ten.txt', '0123456789')]);
    const reads = recording.calls.filter((call) => call.op === 'read');
    assert.equal(reads.length, 1, 'one read asking for 11 bytes: the short answer is the end');
    assert.equal(recording.bytesRead, 10);
  });

  it('cuts a file longer than its fstat size at what was reserved for it, and says so', () => {
    // A file whose size lies (as procfs and some FUSE files do), or that grew after its fstat: the seam
    // under-reports the size by 8. The budget was reserved from the fstat size in enumeration order, so
    // the file is cut there (never stretched by timing), with no digest and a gap naming the cause.
    const lying: SurfaceFs = {
      ...variant.fs,
      fstat: (fd) => {
        const stat = variant.fs.fstat(fd);
        if (stat.isFile()) stat.size -= 8;
        return stat;
      },
    };
    const { fs, recording } = recordingFs({}, lying);
    const result = acquireDirect(root, '/exact/ten.txt', 'exact', { maxReadBytes: 6 }, fs);
    assert.ok(recording.bytesRead <= 3, 'two reserved bytes and the one-byte probe, no more');
    assert.deepEqual(result.entries, [
      {
        uri: '/exact/ten.txt',
        sizeBytes: 2,
        sha256: null,
        modifiedAt: MTIME.toISOString(),
        content: '01',
        contentTruncated: true,
      },
    ]);
    assert.deepEqual(result.gaps, [
      {
        reason: 'read_failed',
        uri: '/exact/ten.txt',
        detail: 'the file grew while it was read (fstat reported 2 bytes); only those were read',
      },
    ]);
    assert.equal(result.stats.bytesRead, 2);
  });

  it('reports sizeBytes as the fstat size when the budget ends first', () => {
    const result = acquireDirect(root, '/exact/ten.txt', 'exact', { maxReadBytes: 3 }, variant.fs);
    assert.equal(result.entries[0]?.sizeBytes, 10);
    assert.equal(result.entries[0]?.sha256, null);
  });
});

describeEachSurfaceFs('reads', (variant) => {
  it('reads a file that fits in one chunk with one read call, and a growing file to its real end', () => {
    const dir = tempDir();
    try {
      buildTree(dir, { 'small.txt': 'hello' });
      const { fs, recording } = recordingFs({}, variant.fs);
      const result = acquireDirect(dir, '/small.txt', 'exact', {}, fs);
      assert.deepEqual(result.entries, [textEntry('/small.txt', 'hello')]);
      assert.equal(recording.calls.filter((call) => call.op === 'read').length, 1);
      // A seam whose fstat reports more bytes than the file holds: the short read has not reached that size, so reading goes on to the real end.
      const shrunk: SurfaceFs = {
        ...variant.fs,
        fstat: (fd) => Object.assign(variant.fs.fstat(fd), { size: 99 }),
      };
      const grown = recordingFs({}, shrunk);
      const again = acquireDirect(dir, '/small.txt', 'exact', {}, grown.fs);
      assert.deepEqual(again.entries, [textEntry('/small.txt', 'hello')]);
      assert.equal(grown.recording.calls.filter((call) => call.op === 'read').length, 2);
    } finally {
      removeDir(dir);
    }
  });
});

describeEachSurfaceFs('maxContentBytes and what a read keeps', (variant) => {
  let root: string;
  const binary = Buffer.from([0x00, 0xff, 0xfe, 0x80, 0x41]);
  before(() => {
    root = tempDir();
    buildTree(root, {
      'e.txt': 'héllo',
      'emoji.txt': 'a😀b',
      'bin.dat': binary,
      'late-binary.dat': Buffer.concat([Buffer.from('text first '), binary]),
      'bom.txt': '\ufeffbom',
      'empty.txt': '',
    });
  });
  after(() => removeDir(root));

  const truncated = (uri: string, whole: string | Buffer, content: string | null) => ({
    uri,
    sizeBytes: Buffer.byteLength(whole),
    sha256: sha256Hex(whole),
    modifiedAt: MTIME.toISOString(),
    content,
    contentTruncated: content !== null,
  });

  it('keeps a UTF-8 prefix, dropping a character split by the cut (up to 3 bytes)', () => {
    // "h" is 1 byte, "é" 2: a cut at 2 bytes splits é.
    assert.deepEqual(acquireDirect(root, '/e.txt', 'exact', { maxContentBytes: 2 }, variant.fs).entries, [
      truncated('/e.txt', 'héllo', 'h'),
    ]);
    assert.deepEqual(acquireDirect(root, '/e.txt', 'exact', { maxContentBytes: 3 }, variant.fs).entries, [
      truncated('/e.txt', 'héllo', 'hé'),
    ]);
    // 😀 is 4 bytes after "a": cuts at 2, 3 and 4 bytes drop 1, 2 and 3 of its bytes.
    for (const limit of [2, 3, 4]) {
      assert.deepEqual(
        acquireDirect(root, '/emoji.txt', 'exact', { maxContentBytes: limit }, variant.fs).entries,
        [truncated('/emoji.txt', 'a😀b', 'a')],
      );
    }
    assert.deepEqual(acquireDirect(root, '/emoji.txt', 'exact', { maxContentBytes: 5 }, variant.fs).entries, [
      truncated('/emoji.txt', 'a😀b', 'a😀'),
    ]);
  });

  it('keeps the whole text untruncated when the file fits exactly', () => {
    assert.deepEqual(acquireDirect(root, '/e.txt', 'exact', { maxContentBytes: 6 }, variant.fs).entries, [
      textEntry('/e.txt', 'héllo'),
    ]);
  });

  it('keeps of a file that is not text only its start before the first byte that is not UTF-8, hashed in full', () => {
    const result = acquireDirect(root, '/*.dat', 'glob', {}, variant.fs);
    assert.equal(result.acquisition, 'complete');
    const late = Buffer.concat([Buffer.from('text first '), binary]);
    // A NUL is UTF-8, but a file holding one is not text: the prefix keeps it, up to the 0xff.
    assert.deepEqual(result.entries, [
      { ...truncated('/bin.dat', binary, '\u0000'), notText: true },
      { ...truncated('/late-binary.dat', late, 'text first \u0000'), notText: true },
    ]);
    // Binary bytes beyond the retained prefix are never seen by the decoder: the prefix is text.
    assert.deepEqual(
      acquireDirect(root, '/late-binary.dat', 'exact', { maxContentBytes: 4 }, variant.fs).entries,
      [truncated('/late-binary.dat', late, 'text')],
    );
  });

  it('keeps at most NON_TEXT_PREFIX_BYTES of a file that is not text, whatever maxContentBytes allows', () => {
    const dir = tempDir();
    try {
      const nul = `${'a'.repeat(NON_TEXT_PREFIX_BYTES)}\u0000${'b'.repeat(300_000)}`;
      const small = 'ascii\u0000nul';
      buildTree(dir, { 'nul.txt': nul, 'small.txt': small, 'clean.txt': 'x'.repeat(300_000) });
      const result = acquireDirect(dir, '/*.txt', 'glob', { maxContentBytes: 1_000_000 }, variant.fs);
      assert.deepEqual(result.entries, [
        textEntry('/clean.txt', 'x'.repeat(300_000)),
        { ...truncated('/nul.txt', nul, 'a'.repeat(NON_TEXT_PREFIX_BYTES)), notText: true },
        // A small ASCII file holding a NUL is not text either (its fast path checks for the NUL).
        { ...truncated('/small.txt', small, small), notText: true },
      ]);
    } finally {
      removeDir(dir);
    }
  });

  it('keeps a byte-order mark, so the text is the file’s own', () => {
    assert.deepEqual(acquireDirect(root, '/bom.txt', 'exact', {}, variant.fs).entries, [
      textEntry('/bom.txt', '\ufeffbom'),
    ]);
  });

  it('reads an empty file as a complete, hashed, empty entry', () => {
    assert.deepEqual(acquireDirect(root, '/empty.txt', 'exact', {}, variant.fs).entries, [
      textEntry('/empty.txt', ''),
    ]);
  });
});

describeEachSurfaceFs('entries', (variant) => {
  it('are sorted by uri and unique, whatever order the directory lists them in', () => {
    const root = tempDir();
    try {
      const names = ['b', 'B', 'a', '_', 'é', 'Z', '10', '9', 'aa', 'a-b', 'a.b', '~'];
      const tree: Record<string, string> = {};
      for (const name of names) tree[name] = name;
      buildTree(root, { d: { dir: { ...tree, sub: { dir: tree } } } });
      const result = acquireDirect(root, '/d/**', 'glob', {}, variant.fs);
      const uris = result.entries.map((entry) => entry.uri);
      const expected = [...names.map((n) => `/d/${n}`), ...names.map((n) => `/d/sub/${n}`)].sort();
      assert.deepEqual(uris, expected);
      assert.equal(new Set(uris).size, uris.length);
    } finally {
      removeDir(root);
    }
  });
});
