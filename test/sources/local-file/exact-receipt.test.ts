import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { InvalidLocatorError } from '../../../src/errors.js';
import { parseLocator } from '../../../src/models/locator.js';
import { parsedSurfaceLocator, type SurfaceScorable, surface } from '../../../src/models/scorable.js';
import { LocalFileSurfaceSource } from '../../../src/sources/local-file-source.js';
import { buildTree, removeDir, tempDir, textEntry } from '../support/trees.js';

/**
 * The main thread's share of an exact acquisition (issue 14, row 4a): the locator is parsed once (a
 * scorable `surface()` built carries its parse), and never trusted for a uri or match it was not parsed
 * for.
 */

describe('the parse surface() carries to acquire', () => {
  it('is the parse of that very object, and only while it holds the same uri and match', () => {
    const scorable = surface('/a/b.txt');
    assert.deepEqual(parsedSurfaceLocator('/a/b.txt', 'exact', scorable), parseLocator('/a/b.txt', 'exact'));
    // Another object with the same fields was not built by surface(): no carried parse.
    assert.equal(parsedSurfaceLocator('/a/b.txt', 'exact', { ...scorable }), undefined);
    assert.equal(parsedSurfaceLocator('/a/c.txt', 'exact', scorable), undefined);
    assert.equal(parsedSurfaceLocator('/a/b.txt', 'glob', scorable), undefined);
    const glob = surface('/a/**/*.md', 'glob');
    const carried = parsedSurfaceLocator('/a/**/*.md', 'glob', glob);
    const fresh = parseLocator('/a/**/*.md', 'glob');
    // Compiled matchers are closures (never deep-equal): the parse is compared by what it says.
    assert.equal(JSON.stringify(carried), JSON.stringify(fresh));
    assert.deepEqual(carried?.segments, fresh.segments);
  });
});

describe('LocalFileSurfaceSource.acquire parses the locator once, and never a stale parse', () => {
  let dir: string;
  let source: LocalFileSurfaceSource;
  before(() => {
    dir = tempDir();
    buildTree(dir, { 'a.txt': 'inside', a: { dir: { 'b.txt': 'b' } } });
    source = new LocalFileSurfaceSource({ root: dir });
  });
  after(async () => {
    await source.close();
    removeDir(dir);
  });

  it('reads what a surface() scorable names', async () => {
    const observation = await source.acquire(surface('/a/b.txt'));
    assert.equal(observation.acquisition, 'complete');
    assert.deepEqual(observation.payload.entries, [textEntry('/a/b.txt', 'b')]);
  });

  it('parses again a surface() scorable whose uri was changed since (a ".." is refused, not read)', async () => {
    const scorable = surface('/a/b.txt');
    (scorable as { uri: string }).uri = '/a/../a.txt';
    await assert.rejects(source.acquire(scorable), InvalidLocatorError);
  });

  it('parses the uri the schema read when a getter answers differently the second time', async () => {
    // Attack: a scorable whose uri is a valid locator when first read and a ".." path afterwards. The
    // parse of the first answer must not stand for the second, which the schema alone (non-empty, no NUL)
    // accepts: the scope is parsed again, and the acquisition is refused with the locator's error.
    let reads = 0;
    const scorable = {
      scorableType: 'surface',
      get uri() {
        reads++;
        return reads === 1 ? '/a.txt' : '/a/../../outside.txt';
      },
      match: 'exact',
    } as unknown as SurfaceScorable;
    await assert.rejects(source.acquire(scorable), (error: unknown) => {
      assert.ok(error instanceof InvalidLocatorError, String(error));
      assert.match(error.message, /"\.\." segment/);
      return true;
    });
    assert.ok(reads >= 2, `the uri was read ${reads} times`);
  });

  it('fills in the default match before comparing (a scorable without match is exact)', async () => {
    const observation = await source.acquire({ scorableType: 'surface', uri: '/a.txt' } as SurfaceScorable);
    assert.deepEqual(observation.scorable, { scorableType: 'surface', uri: '/a.txt', match: 'exact' });
    assert.deepEqual(observation.payload.entries, [textEntry('/a.txt', 'inside')]);
  });
});
