import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { InvalidLocatorError } from '../../../src/errors.js';
import { type SurfaceScorable, surface } from '../../../src/models/scorable.js';
import { LocalFileSurfaceSource } from '../../../src/sources/local-file-source.js';
import { buildTree, removeDir, tempDir, textEntry } from '../support/trees.js';

/**
 * The main thread's share of an exact acquisition (issue 14, row 4a): `acquire` parses the locator once,
 * and never lets that parse stand for a uri or match it was not made for.
 */

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

  it('parses the uri a surface() scorable holds now (changed since: a ".." is refused, not read)', async () => {
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
