import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidLocatorError, InvalidOptionError } from '../../src/errors.js';
import { matchesLocator, parseLocator } from '../../src/models/locator.js';
import { ObservationSchema } from '../../src/models/observation.js';
import { surface } from '../../src/models/scorable.js';
import { LocalFileSurfaceSource } from '../../src/sources/local-file-source.js';
import { makeWorkspace } from '../support/workspace.js';

describe('locators are well-formed Unicode', () => {
  it('rejects an unpaired surrogate before any I/O, so no other file is read in its place', () => {
    assert.throws(() => parseLocator('/\uD800.txt'), InvalidLocatorError);
    assert.throws(() => surface('/a/\uDC00', 'glob'), /unpaired UTF-16 surrogate/);
    assert.equal(parseLocator('/\u{1F600}.txt').segments[0], '\u{1F600}.txt');
  });
});

describe('matchesLocator', () => {
  const glob = parseLocator('/data/**/*.sh', 'glob');
  it('accepts the paths the glob can find and refuses the rest', () => {
    assert.equal(matchesLocator(glob, '/data/run.sh'), true);
    assert.equal(matchesLocator(glob, '/data/a/b/.x.sh'), true);
    assert.equal(matchesLocator(glob, '/data/run.py'), false);
    assert.equal(matchesLocator(glob, '/other/run.sh'), false);
    assert.equal(matchesLocator(glob, '/data/../etc/passwd.sh'), false);
  });
  it('makes a trailing ** match one or more names', () => {
    const all = parseLocator('/data/**', 'glob');
    assert.equal(matchesLocator(all, '/data/x'), true);
    assert.equal(matchesLocator(all, '/data/a/b/c'), true);
    assert.equal(matchesLocator(all, '/data'), false);
  });
});

describe('stored evidence that contradicts itself is refused', () => {
  async function observation(uri: string, match: 'exact' | 'glob') {
    const root = makeWorkspace({ 'f.txt': 'hello PAYLOAD world', 'g.txt': 'other' });
    return JSON.parse(
      JSON.stringify(await new LocalFileSurfaceSource({ root }).acquire(surface(uri, match))),
    );
  }

  it('refuses complete text that is not the whole file (an edited record would replay to false)', async () => {
    const record = await observation('/f.txt', 'exact');
    record.payload.entries[0].content = 'hello';
    const result = ObservationSchema.safeParse(record);
    assert.equal(result.success, false);
    assert.match(
      result.error?.issues[0]?.message ?? '',
      /complete text of 5 bytes must be the whole file of 19 bytes/,
    );
  });

  it('refuses an entry the glob could never have found', async () => {
    const record = await observation('/*.txt', 'glob');
    record.payload.entries[0].uri = '/../etc/passwd.txt';
    const result = ObservationSchema.safeParse(record);
    assert.equal(result.success, false);
    assert.deepEqual(result.error?.issues[0]?.path, ['payload', 'entries', 0, 'uri']);
  });
});

describe('source options', () => {
  it('names a non-finite limit as it was given and refuses a misspelled option', () => {
    assert.throws(() => new LocalFileSurfaceSource({ root: '/tmp', maxReadBytes: Number.NaN }), /got NaN/);
    assert.throws(
      () => new LocalFileSurfaceSource({ root: '/tmp', maxfiles: 3 } as unknown as { root: string }),
      (error: unknown) => error instanceof InvalidOptionError && /did you mean maxFiles/.test(error.message),
    );
  });
});
