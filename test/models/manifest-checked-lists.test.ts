import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidRecordError } from '../../src/errors.js';
import {
  CheckedManifestEntries,
  checkManifest,
  checkManifestEntries,
  checkManifestReusingEntries,
  type ManifestEntry,
  pickCheckedManifestEntries,
} from '../../src/models/manifest.js';

/**
 * A manifest's entries are trusted by list, not by entry (models/manifest.ts): a list checked here is
 * frozen and registered, a manifest's list may be picked from registered lists only, and a manifest whose
 * list is not registered is checked in full. These are the ways a forged or edited entry could slip into
 * evidence without passing the entry rule; each must be refused.
 */

const sha = (n: number) => n.toString(16).padStart(64, '0');
const file = (uri: string, n: number): ManifestEntry => ({
  uri,
  type: 'file',
  sizeBytes: n,
  sha256: sha(n),
  mode: 0o644,
  linkTarget: null,
});
const record = (entries: unknown) => ({
  schemaVersion: 1,
  surface: 'workspace',
  sourceIdentifier: { type: 'LocalFileSurfaceSource', version: '1', params: { root: '/ws' } },
  acquisition: 'complete',
  takenAt: '2026-12-02T01:00:00.000Z',
  entries,
  coverage: { complete: true, reasons: [], gaps: [] },
  metadata: {},
});

describe('checked manifest entry lists', () => {
  it('checkManifestEntries and CheckedManifestEntries give frozen lists of fresh frozen entries', () => {
    const input = [file('/a', 1), file('/b', 2)];
    const checked = checkManifestEntries(input);
    assert.deepEqual(checked, input);
    assert.notEqual(checked[0], input[0], 'a fresh object, never the caller’s');
    assert.ok(Object.isFrozen(checked) && checked.every((entry) => Object.isFrozen(entry)));
    const built = new CheckedManifestEntries();
    built.add('/c', 'directory', 4096, null, 0o755, null);
    const list = built.list();
    assert.ok(Object.isFrozen(list));
    assert.throws(() => built.add('/d', 'other', 0, null, 0, null), /add after list/);
    assert.throws(
      () => new CheckedManifestEntries().add('/e', 'directory', 1, sha(1), 0o755, null),
      InvalidRecordError,
    );
  });

  it('picks only from registered lists, only entries that exist, in pairs', () => {
    const a = checkManifestEntries([file('/a', 1), file('/c', 3)]);
    const b = checkManifestEntries([file('/b', 2)]);
    const picked = pickCheckedManifestEntries([a, b], Int32Array.of(0, 0, 1, 0, 0, 1));
    assert.deepEqual(
      picked.map((entry) => entry.uri),
      ['/a', '/b', '/c'],
    );
    assert.equal(picked[1], b[0], 'the very checked objects');
    assert.throws(
      () => pickCheckedManifestEntries([a, [file('/z', 9)]], Int32Array.of(0, 0)),
      /no manifest check built/,
    );
    assert.throws(() => pickCheckedManifestEntries([a], Int32Array.of(0, 2)), /names no entry/);
    assert.throws(() => pickCheckedManifestEntries([a], Int32Array.of(1, 0)), /names no entry/);
    assert.throws(() => pickCheckedManifestEntries([a], Int32Array.of(0)), /pairs/);
  });

  it('checkManifestReusingEntries takes a registered list as it is, still checks the record rules', () => {
    const list = checkManifestEntries([file('/a', 1), file('/b', 2)]);
    const manifest = checkManifestReusingEntries(record(list));
    assert.equal(manifest.entries[0], list[0]);
    // A registered list whose picks break the record's rules (a duplicate, out of order) is refused.
    const twice = pickCheckedManifestEntries([list], Int32Array.of(0, 0, 0, 0));
    assert.throws(() => checkManifestReusingEntries(record(twice)), /duplicate entry uri/);
    const backwards = pickCheckedManifestEntries([list], Int32Array.of(0, 1, 0, 0));
    assert.throws(() => checkManifestReusingEntries(record(backwards)), /sorted by uri/);
  });

  it('checkManifestReusingEntries checks in full a list it did not register, so a forged entry is refused', () => {
    const list = checkManifestEntries([file('/a', 1)]);
    // The same checked entry beside a forged one, in a plain array: every entry is checked again.
    const forged = {
      uri: '/b',
      type: 'directory',
      sizeBytes: 0,
      sha256: sha(5),
      mode: 0o755,
      linkTarget: null,
    };
    assert.throws(() => checkManifestReusingEntries(record([list[0], forged])), InvalidRecordError);
    const copy = checkManifestReusingEntries(record([...list]));
    assert.deepEqual(copy.entries, list);
  });

  it('a checked manifest’s own list is registered: a final manifest may pick from its baseline', () => {
    const baseline = checkManifest(record([file('/a', 1), file('/b', 2)]));
    const picked = pickCheckedManifestEntries([baseline.entries], Int32Array.of(0, 1));
    assert.equal(picked[0], baseline.entries[1]);
  });
});
