import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { InvalidLocatorError, InvalidOptionError } from '../../src/errors.js';
import { acquireSync } from '../../src/sources/local-file/acquire-sync.js';
import { DEFAULT_LIMITS } from '../../src/sources/local-file/limits.js';
import { LocalFileSurfaceSource } from '../../src/sources/local-file-source.js';
import { recordingFs } from './support/recording-fs.js';
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

describe('LocalFileSurfaceSource roots and exact locators', () => {
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
    source = new LocalFileSurfaceSource({ root });
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
    const missing = new LocalFileSurfaceSource({ root: path.join(dir, 'missing') });
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
    const file = new LocalFileSurfaceSource({ root: path.join(root, 'plain.txt') });
    const observation = await file.acquire(surface('/**', 'glob'));
    assert.equal(observation.acquisition, 'unavailable');
    assert.deepEqual(observation.payload.entries, []);
    assert.deepEqual(observation.payload.coverage.gaps, [
      { reason: 'surface_root_unavailable', uri: '/', detail: 'the root is not a directory' },
    ]);
    await file.close();
  });

  it('resolves a root given through a symlink and confines to the real directory', async () => {
    const linked = new LocalFileSurfaceSource({ root: path.join(dir, 'ws-link') });
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
