import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, it } from 'node:test';
import { recordingFs } from '../support/recording-fs.js';
import { describeEachSurfaceFs } from '../support/surface-fs-variants.js';
import { acquireDirect, buildTree, removeDir, tempDir, textEntry } from '../support/trees.js';

/** Glob enumeration (SPEC §5): pattern semantics, static-prefix start, each directory listed once. */

describeEachSurfaceFs('glob semantics', (variant) => {
  let root: string;
  before(() => {
    root = tempDir();
    buildTree(root, {
      data: {
        dir: {
          'a.txt': 'a',
          'b.txt': 'b',
          'ab.txt': 'ab',
          'c.md': 'c',
          'x1.log': '1',
          'x2.log': '2',
          'xa.log': 'xa',
          '.hidden.txt': 'h',
          nested: { dir: { 'n.txt': 'n', deep: { dir: { 'z.txt': 'z' } } } },
          empty: { dir: {} },
        },
      },
      other: { dir: { 'o.txt': 'o', 'z.txt': 'other z' } },
      'top.txt': 'top',
    });
  });
  after(() => removeDir(root));

  const cases: [string, string[]][] = [
    ['/data/*.txt', ['/data/.hidden.txt', '/data/a.txt', '/data/ab.txt', '/data/b.txt']],
    ['/data/?.txt', ['/data/a.txt', '/data/b.txt']],
    ['/data/x[0-9].log', ['/data/x1.log', '/data/x2.log']],
    ['/data/x[!0-9].log', ['/data/xa.log']],
    ['/data/x[^0-9].log', ['/data/xa.log']],
    ['/data/*.{md,log}', ['/data/c.md', '/data/x1.log', '/data/x2.log', '/data/xa.log']],
    ['/data/{a,b}.txt', ['/data/a.txt', '/data/b.txt']],
    [
      '/data/**/*.txt',
      [
        '/data/.hidden.txt',
        '/data/a.txt',
        '/data/ab.txt',
        '/data/b.txt',
        '/data/nested/deep/z.txt',
        '/data/nested/n.txt',
      ],
    ],
    ['/**/z.txt', ['/data/nested/deep/z.txt', '/other/z.txt']],
    ['/data/nested/**', ['/data/nested/deep/z.txt', '/data/nested/n.txt']],
    ['/data/nested/**/deep/z.txt', ['/data/nested/deep/z.txt']],
    ['/data/**/deep/**', ['/data/nested/deep/z.txt']],
    [
      '/*/*.txt',
      ['/data/.hidden.txt', '/data/a.txt', '/data/ab.txt', '/data/b.txt', '/other/o.txt', '/other/z.txt'],
    ],
    ['/*.txt', ['/top.txt']],
    ['/data/{nested,empty}/*', ['/data/nested/n.txt']],
    [
      '/data/*',
      [
        '/data/.hidden.txt',
        '/data/a.txt',
        '/data/ab.txt',
        '/data/b.txt',
        '/data/c.md',
        '/data/x1.log',
        '/data/x2.log',
        '/data/xa.log',
      ],
    ],
    ['/data/empty/**', []],
    ['/missing/**', []],
    ['/top.txt/**', []],
    ['/data/a.txt', ['/data/a.txt']],
  ];

  for (const [uri, expected] of cases) {
    it(`${uri} matches ${expected.length === 0 ? 'nothing, completely' : expected.join(' ')}`, () => {
      const result = acquireDirect(root, uri, 'glob', {}, variant.fs);
      assert.equal(result.acquisition, 'complete');
      assert.deepEqual(result.gaps, []);
      const contents = fs.readFileSync.bind(fs);
      assert.deepEqual(
        result.entries,
        expected.map((entryUri) => textEntry(entryUri, contents(path.join(root, entryUri), 'utf8'))),
      );
    });
  }

  it('never matches across "/" with *, ? or a class', () => {
    for (const uri of ['/data*', '/dat?/n.txt', '/data/nested?deep', '/dat?']) {
      const result = acquireDirect(root, uri, 'glob', {}, variant.fs);
      assert.deepEqual(result.entries, [], uri);
    }
  });

  it('walks from the static prefix only: the root and other directories are never listed', () => {
    const { fs: seam, recording } = recordingFs({}, variant.fs);
    const result = acquireDirect(root, '/data/nested/*.txt', 'glob', {}, seam);
    assert.deepEqual(result.entries, [textEntry('/data/nested/n.txt', 'n')]);
    assert.deepEqual(recording.listed, [path.join(root, 'data/nested')]);
    assert.deepEqual(result.stats, {
      directoriesListed: 1,
      entriesExamined: 2,
      candidates: 1,
      filesRead: 1,
      bytesRead: 1,
    });
  });
});

describeEachSurfaceFs('a listing is sorted once its dropped names are gone', (variant) => {
  let root: string;
  before(() => {
    root = tempDir();
    fs.mkdirSync(path.join(root, 'mixed'));
    // Names that are not UTF-8 but could match x*.md read leniently (each an unrepresentable_name gap),
    // among files x*.md drops and files it reads: the gaps and the entries come out in byte order whatever
    // order the directory lists them in.
    const odd = [0xff, 0xc0, 0xfe, 0xe9, 0xf8, 0xc1, 0xfa, 0xed];
    for (const byte of odd) {
      fs.writeFileSync(
        Buffer.concat([Buffer.from(`${root}/mixed/x`), Buffer.from([byte]), Buffer.from('.md')]),
        'o',
      );
    }
    for (let i = 0; i < 40; i++) fs.writeFileSync(path.join(root, 'mixed', `drop-${i}.txt`), 'd');
    for (const name of ['x9.md', 'x1.md', 'xz.md', 'x5.md'])
      fs.writeFileSync(path.join(root, 'mixed', name), name);
  });
  after(() => removeDir(root));

  it('gaps and entries in byte order, the dropped names nowhere', () => {
    const result = acquireDirect(root, '/mixed/x*.md', 'glob', {}, variant.fs);
    assert.deepEqual(
      result.entries.map((entry) => entry.uri),
      ['/mixed/x1.md', '/mixed/x5.md', '/mixed/x9.md', '/mixed/xz.md'],
    );
    const sorted = [0xc0, 0xc1, 0xe9, 0xed, 0xf8, 0xfa, 0xfe, 0xff];
    assert.deepEqual(
      result.gaps.map((gap) => [gap.reason, gap.uri, gap.detail]),
      sorted.map((byte) => [
        'unrepresentable_name',
        '/mixed',
        `a name in this directory is not UTF-8: x\\x${byte.toString(16)}.md`,
      ]),
    );
  });
});

describeEachSurfaceFs('each directory is listed once (SPEC §5 listing test)', (variant) => {
  let root: string;
  before(() => {
    root = tempDir();
    buildTree(root, {
      data: { dir: { 'out.txt': 'top', nested: { dir: { 'out.txt': 'deep' } }, empty: { dir: {} } } },
      outside: { dir: { 'out.txt': 'not data' } },
      'out.txt': 'root file',
    });
  });
  after(() => removeDir(root));

  const expectedListed = () => ['data', 'data/empty', 'data/nested'].map((p) => path.join(root, p));
  const patterns: [string, string[]][] = [
    ['/data/**', ['/data/nested/out.txt', '/data/out.txt']],
    ['/data/**/*', ['/data/nested/out.txt', '/data/out.txt']],
    ['/data/**/**', ['/data/nested/out.txt', '/data/out.txt']],
    ['/data/**/**/out.txt', ['/data/nested/out.txt', '/data/out.txt']],
  ];
  for (const [uri, uris] of patterns) {
    it(`${uri} lists data, data/nested and data/empty exactly once and nothing outside data`, () => {
      const { fs: seam, recording } = recordingFs({}, variant.fs);
      const result = acquireDirect(root, uri, 'glob', {}, seam);
      assert.equal(result.acquisition, 'complete');
      assert.deepEqual(
        result.entries.map((entry) => entry.uri),
        uris,
      );
      assert.deepEqual([...recording.listed].sort(), expectedListed());
      const dataPrefix = `${path.join(root, 'data')}/`;
      for (const name of recording.listedNames) assert.ok(name.startsWith(dataPrefix), name);
      // Nothing outside data is touched at all, not only not listed.
      for (const call of recording.calls) {
        if (
          call.where === undefined ||
          call.op === 'resolveRoot' ||
          call.op === 'openRoot' ||
          call.op === 'mountedIdentityOfPath'
        )
          continue;
        assert.ok(
          call.where === path.join(root, 'data') || call.where.startsWith(dataPrefix),
          `${call.op} ${call.where}`,
        );
      }
    });
  }

  it('a recursive glob under a budget of exactly the entries present lists each directory once', () => {
    // A wide and deep tree: 4 levels of 3 directories, each holding 2 files, 120 directories in all.
    const tree = path.join(root, 'tight');
    fs.mkdirSync(tree);
    let directories = 0;
    let entries = 0;
    const grow = (at: string, depth: number) => {
      directories++;
      for (const file of ['f1.txt', 'f2.txt']) fs.writeFileSync(path.join(at, file), file);
      entries += 2;
      if (depth === 4) return;
      for (const sub of ['a', 'b', 'c']) {
        fs.mkdirSync(path.join(at, sub));
        entries++;
        grow(path.join(at, sub), depth + 1);
      }
    };
    grow(tree, 1);
    const limits = { maxListedEntries: entries, maxFiles: 2 * directories };
    const { fs: seam, recording } = recordingFs({}, variant.fs);
    const result = acquireDirect(root, '/tight/**/**/*', 'glob', limits, seam);
    assert.equal(result.acquisition, 'complete', JSON.stringify(result.gaps));
    assert.equal(result.entries.length, 2 * directories);
    assert.equal(recording.listed.length, directories);
    assert.equal(new Set(recording.listed).size, directories);
    assert.equal(result.stats.entriesExamined, entries);
    // One entry less and the budget runs out: the walk cannot have listed anything twice to fit.
    const short = acquireDirect(
      root,
      '/tight/**',
      'glob',
      { ...limits, maxListedEntries: entries - 1 },
      variant.fs,
    );
    assert.equal(short.acquisition, 'partial');
    assert.deepEqual(
      short.gaps.map((gap) => gap.reason),
      ['listing_limit_exceeded'],
    );
  });
});

describeEachSurfaceFs('glob matching cost', (variant) => {
  it('attacker-chosen names cannot make a pattern backtrack: 200 names of 255 "a" against *a*a*a*a*a*b', () => {
    // With the locator's RegExp, one such name took 3.5 s at four stars and minutes at five.
    const root = tempDir();
    try {
      fs.mkdirSync(path.join(root, 'd'));
      for (let i = 0; i < 200; i++)
        fs.writeFileSync(path.join(root, 'd', `${'a'.repeat(252)}${String(i).padStart(3, '0')}`), '');
      buildTree(path.join(root, 'd'), { [`${'a'.repeat(200)}b`]: 'match' });
      const started = performance.now();
      const result = acquireDirect(root, '/d/*a*a*a*a*a*b', 'glob', {}, variant.fs);
      const elapsedMs = performance.now() - started;
      assert.deepEqual(result.entries, [textEntry(`/d/${'a'.repeat(200)}b`, 'match')]);
      assert.ok(elapsedMs < 10_000, `took ${elapsedMs} ms`); // the RegExp: minutes per name
    } finally {
      removeDir(root);
    }
  });
});
