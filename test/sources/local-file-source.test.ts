import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { InvalidLocatorError, InvalidOptionError } from '../../src/errors.js';
import { acquireSync } from '../../src/sources/local-file/acquire-sync.js';
import { DEFAULT_LIMITS } from '../../src/sources/local-file/limits.js';
import { LocalFileSurfaceSource } from '../../src/sources/local-file-source.js';
import { runNode, writeChildScript } from './support/child-process.js';
import { recordingFs } from './support/recording-fs.js';
import { describeEachSurfaceFs } from './support/surface-fs-variants.js';
import { buildTree, expectedObservation, removeDir, tempDir, textEntry } from './support/trees.js';

const surface = (uri: string, match: 'exact' | 'glob' = 'exact') =>
  ({ scorableType: 'surface', uri, match }) as const;

describe('LocalFileSurfaceSource options', () => {
  for (const name of ['maxFiles', 'maxContentBytes', 'maxReadBytes', 'maxListedEntries'] as const) {
    it(`rejects a ${name} that is not a positive integer, naming the option`, () => {
      for (const value of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '10', null, 2 ** 53]) {
        assert.throws(
          () => new LocalFileSurfaceSource({ root: '/tmp', [name]: value as number }),
          (error: unknown) =>
            error instanceof InvalidOptionError &&
            error.code === 'invalid_option' &&
            error.message.startsWith(`${name} must be a positive integer`),
          `${name}=${String(value)}`,
        );
      }
    });
  }

  it('rejects a missing, empty or NUL-holding root, naming the option', () => {
    for (const root of [undefined, '', 'a\0b', 42]) {
      assert.throws(
        () => new LocalFileSurfaceSource({ root } as unknown as { root: string }),
        (error: unknown) => error instanceof InvalidOptionError && /^root must be/.test(error.message),
      );
    }
    assert.throws(
      () => new LocalFileSurfaceSource(undefined as unknown as { root: string }),
      InvalidOptionError,
    );
  });

  it('identifies itself by root and limits, so differently configured sources differ', () => {
    const a = new LocalFileSurfaceSource({ root: '/ws/./x' });
    assert.deepEqual(a.identifier(), {
      type: 'LocalFileSurfaceSource',
      version: '1',
      params: { root: '/ws/x', ...DEFAULT_LIMITS },
    });
    const b = new LocalFileSurfaceSource({ root: '/ws/x', maxFiles: 5 });
    assert.deepEqual(b.identifier().params, { root: '/ws/x', ...DEFAULT_LIMITS, maxFiles: 5 });
  });
});

describe('LocalFileSurfaceSource locators', () => {
  const bad: [string, 'exact' | 'glob', RegExp][] = [
    ['/a/../b', 'exact', /"\.\." segment/],
    ['..', 'exact', /"\.\." segment/],
    ['/', 'exact', /names the root itself/],
    ['', 'glob', /inside the root/],
    ['/a//b', 'exact', /empty or "\." segment/],
    ['/a/', 'glob', /empty or "\." segment/],
    ['/a/.', 'exact', /empty or "\." segment/],
    ['/a\\b', 'exact', /backslash/],
    ['/a\0b', 'exact', /NUL/],
    ['!/a/*', 'glob', /negat/],
    ['/!a/*', 'glob', /negat/],
  ];

  it('rejects locators that cannot name a location inside the root, with a typed error', async () => {
    const source = new LocalFileSurfaceSource({ root: '/nonexistent-witness-root' });
    for (const [uri, match, message] of bad) {
      await assert.rejects(
        source.acquire(surface(uri, match)),
        (error: unknown) => error instanceof Error && message.test(error.message),
        `${uri} (${match})`,
      );
    }
    await source.close();
  });

  it('rejects them before any I/O (nothing reaches the seam)', () => {
    for (const [uri, match] of bad) {
      const { fs: seam, recording } = recordingFs();
      assert.throws(
        () => acquireSync({ root: '/tmp', uri, match, limits: { ...DEFAULT_LIMITS } }, seam, () => false),
        InvalidLocatorError,
      );
      assert.deepEqual(recording.calls, [], `${uri} (${match})`);
    }
  });
});

describeEachSurfaceFs('LocalFileSurfaceSource roots and exact locators', (variant) => {
  let dir: string;
  let root: string;
  let source: LocalFileSurfaceSource;
  before(() => {
    dir = tempDir();
    root = path.join(dir, 'ws');
    fs.mkdirSync(root);
    buildTree(root, {
      data: { dir: { 'out.txt': 'hello', sub: { dir: {} } } },
      'plain.txt': 'plain',
    });
    fs.symlinkSync(root, path.join(dir, 'ws-link'));
    source = new LocalFileSurfaceSource({ root, surfaceFs: variant.name });
  });
  after(async () => {
    await source.close();
    removeDir(dir);
  });

  it('reads an exact file in full and records what it did', async () => {
    const observation = await source.acquire(surface('/data/out.txt'));
    assert.deepEqual(
      observation,
      expectedObservation(observation, {
        root,
        uri: '/data/out.txt',
        match: 'exact',
        acquisition: 'complete',
        entries: [textEntry('/data/out.txt', 'hello')],
        stats: { directoriesListed: 0, entriesExamined: 0, candidates: 1, filesRead: 1, bytesRead: 5 },
      }),
    );
  });

  it('accepts a locator without the leading "/" as the same location', async () => {
    const observation = await source.acquire(surface('data/out.txt'));
    assert.deepEqual(observation.payload.entries, [textEntry('data/out.txt', 'hello')]);
  });

  it('returns unavailable with surface_root_unavailable when the root is missing', async () => {
    const missing = new LocalFileSurfaceSource({ root: path.join(dir, 'missing'), surfaceFs: variant.name });
    const observation = await missing.acquire(surface('/data/out.txt'));
    assert.deepEqual(
      observation,
      expectedObservation(observation, {
        root: path.join(dir, 'missing'),
        uri: '/data/out.txt',
        match: 'exact',
        acquisition: 'unavailable',
        gaps: [
          { reason: 'surface_root_unavailable', uri: '/', detail: 'the root cannot be opened (ENOENT)' },
        ],
      }),
    );
    await missing.close();
  });

  it('returns unavailable when the root is not a directory', async () => {
    const file = new LocalFileSurfaceSource({ root: path.join(root, 'plain.txt'), surfaceFs: variant.name });
    const observation = await file.acquire(surface('/**', 'glob'));
    assert.equal(observation.acquisition, 'unavailable');
    assert.deepEqual(observation.payload.entries, []);
    assert.deepEqual(observation.payload.coverage.gaps, [
      { reason: 'surface_root_unavailable', uri: '/', detail: 'the root is not a directory' },
    ]);
    await file.close();
  });

  it('resolves a root given through a symlink and confines to the real directory', async () => {
    const linked = new LocalFileSurfaceSource({ root: path.join(dir, 'ws-link'), surfaceFs: variant.name });
    const observation = await linked.acquire(surface('/data/out.txt'));
    assert.deepEqual(
      observation,
      expectedObservation(observation, {
        root: path.join(dir, 'ws-link'),
        resolvedRoot: fs.realpathSync(root),
        uri: '/data/out.txt',
        match: 'exact',
        acquisition: 'complete',
        entries: [textEntry('/data/out.txt', 'hello')],
        stats: { directoriesListed: 0, entriesExamined: 0, candidates: 1, filesRead: 1, bytesRead: 5 },
      }),
    );
    await linked.close();
  });

  it('proves an absent exact file: complete, no entries', async () => {
    const observation = await source.acquire(surface('/data/missing.txt'));
    assert.deepEqual(
      observation,
      expectedObservation(observation, {
        root,
        uri: '/data/missing.txt',
        match: 'exact',
        acquisition: 'complete',
        stats: { directoriesListed: 0, entriesExamined: 0, candidates: 1, filesRead: 0, bytesRead: 0 },
      }),
    );
    const deeper = await source.acquire(surface('/missing/dir/x.txt'));
    assert.equal(deeper.acquisition, 'complete');
    assert.deepEqual(deeper.payload.entries, []);
  });

  it('proves an absent exact file when a file stands where a directory would be (ENOTDIR)', async () => {
    for (const uri of ['/plain.txt/x', '/data/out.txt/deeper/x']) {
      const observation = await source.acquire(surface(uri));
      assert.equal(observation.acquisition, 'complete', uri);
      assert.deepEqual(observation.payload.entries, [], uri);
      assert.deepEqual(observation.payload.coverage.gaps, [], uri);
    }
  });

  it('reports a directory at an exact locator as not_a_file', async () => {
    const observation = await source.acquire(surface('/data/sub'));
    assert.deepEqual(
      observation,
      expectedObservation(observation, {
        root,
        uri: '/data/sub',
        match: 'exact',
        acquisition: 'partial',
        gaps: [{ reason: 'not_a_file', uri: '/data/sub', detail: 'a directory' }],
        stats: { directoriesListed: 0, entriesExamined: 0, candidates: 1, filesRead: 0, bytesRead: 0 },
      }),
    );
  });
});

describe('LocalFileSurfaceSource worker', () => {
  let dir: string;
  before(() => {
    dir = tempDir();
    buildTree(dir, { 'a.txt': 'a' });
  });
  after(() => removeDir(dir));

  it('releases its worker, so a script that never calls close() exits on its own', async () => {
    const script = writeChildScript(
      dir,
      'exits.mjs',
      `import { LocalFileSurfaceSource } from '{{SOURCE}}';
const source = new LocalFileSurfaceSource({ root: process.argv[2] });
const first = await source.acquire({ scorableType: 'surface', uri: '/a.txt', match: 'exact' });
const second = await source.acquire({ scorableType: 'surface', uri: '/*.txt', match: 'glob' });
process.stdout.write(first.acquisition + ' ' + second.payload.entries.length);`,
    );
    const result = await runNode(script, [dir], { timeoutMs: 15_000 });
    assert.equal(result.signal, null, 'the script had to be killed: the worker kept it alive');
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, 'complete 1');
  });

  // Hashing a gigabyte off the main thread: local-file-source-worker.heavy.test.ts.
});

describeEachSurfaceFs('LocalFileSurfaceSource entries streamed from the worker', (variant) => {
  let dir: string;
  before(() => {
    dir = tempDir();
    // More than two batches of entries, in directories whose walk order is not uri order, with a file
    // that is not UTF-8 and one larger than a read chunk (read through the streaming path).
    for (let i = 0; i < 2_500; i++) {
      const at = path.join(dir, `d${i % 7}`, i % 3 === 0 ? 'x' : '', `f${i}.txt`);
      fs.mkdirSync(path.dirname(at), { recursive: true });
      fs.writeFileSync(at, `file ${i}`);
    }
    fs.writeFileSync(path.join(dir, 'd0.txt'), 'beside d0');
    fs.writeFileSync(path.join(dir, 'd0', 'x.bin'), Buffer.of(0xff));
    fs.writeFileSync(path.join(dir, 'd1', 'big.txt'), 'y'.repeat(1.5 * 1024 * 1024));
  });
  after(() => removeDir(dir));

  it('returns exactly the entries of the single-threaded walk, sorted by uri', async () => {
    const source = new LocalFileSurfaceSource({ root: dir, maxFiles: 10_000, surfaceFs: variant.name });
    try {
      const observation = await source.acquire(surface('/**', 'glob'));
      const direct = acquireSync(
        { root: dir, uri: '/**', match: 'glob', limits: { ...source.limits } },
        variant.fs,
        () => false,
      );
      assert.equal(direct.kind, 'done');
      if (direct.kind !== 'done') return;
      assert.equal(observation.acquisition, 'complete');
      assert.equal(observation.metadata.surfaceFs, variant.name);
      assert.equal(observation.payload.entries.length, 2_503);
      assert.deepEqual(
        observation.payload.entries.map((entry) => ({ ...entry })),
        direct.result.entries,
      );
      assert.ok(Object.isFrozen(observation.payload.entries[0]));
    } finally {
      await source.close();
    }
  });
});
