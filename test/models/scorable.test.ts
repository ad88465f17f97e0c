import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidLocatorError, InvalidRecordError } from '../../src/errors.js';
import {
  ContentScorableSchema,
  content,
  MessageScorableSchema,
  message,
  ScorableSchema,
  SurfaceScorableSchema,
  sameLocator,
  surface,
} from '../../src/models/scorable.js';
import { issuePaths } from '../support/issues.js';

describe('surface()', () => {
  it('builds an exact surface scorable by default', () => {
    assert.deepEqual(surface('/data/out.txt'), {
      scorableType: 'surface',
      uri: '/data/out.txt',
      match: 'exact',
    });
  });

  it('builds a glob surface scorable', () => {
    assert.deepEqual(surface('/out/**/*.sh', 'glob'), {
      scorableType: 'surface',
      uri: '/out/**/*.sh',
      match: 'glob',
    });
  });

  it('checks the locator rules before any I/O', () => {
    assert.throws(() => surface('/a/../b'), InvalidLocatorError);
    assert.throws(() => surface('/data/[x', 'glob'), InvalidLocatorError);
  });
});

describe('message() and content()', () => {
  it('build the message and content scorables', () => {
    assert.deepEqual(message(['p1', 'p2']), { scorableType: 'message', pieceIds: ['p1', 'p2'] });
    assert.deepEqual(content('text'), { scorableType: 'content', text: 'text' });
  });

  it('rejects a message scorable naming no piece, or an empty piece id', () => {
    assert.throws(
      () => message([]),
      (error: unknown) => error instanceof InvalidRecordError && /pieceIds/.test(error.message),
    );
    assert.throws(() => message(['']), InvalidRecordError);
  });

  it('copies the piece ids, so a later change to the caller array does not change the scorable', () => {
    const ids = ['p1'];
    const scorable = message(ids);
    ids.push('p2');
    assert.deepEqual(scorable.pieceIds, ['p1']);
  });
});

describe('SurfaceScorableSchema', () => {
  it('reads a scorable without match as exact', () => {
    assert.deepEqual(SurfaceScorableSchema.parse({ scorableType: 'surface', uri: '/a' }), surface('/a'));
  });

  it('rejects an unknown key', () => {
    assert.deepEqual(issuePaths(SurfaceScorableSchema, { ...surface('/a'), root: '/ws' }), ['root']);
  });

  it('rejects an empty uri and a uri holding NUL, naming the uri', () => {
    assert.deepEqual(issuePaths(SurfaceScorableSchema, { scorableType: 'surface', uri: '' }), ['uri']);
    assert.deepEqual(issuePaths(SurfaceScorableSchema, { scorableType: 'surface', uri: '/a\0' }), ['uri']);
  });

  it('rejects a match kind outside exact and glob', () => {
    assert.deepEqual(
      issuePaths(SurfaceScorableSchema, { scorableType: 'surface', uri: '/a', match: 'regex' }),
      ['match'],
    );
  });
});

describe('ScorableSchema', () => {
  it('reads each kind by its scorableType', () => {
    for (const scorable of [surface('/a'), message(['p']), content('t')]) {
      assert.deepEqual(ScorableSchema.parse(scorable), scorable);
    }
  });

  it('rejects an unknown scorableType', () => {
    assert.deepEqual(issuePaths(ScorableSchema, { scorableType: 'url', uri: '/a' }), ['scorableType']);
  });

  it('rejects unknown keys on message and content scorables', () => {
    assert.deepEqual(issuePaths(MessageScorableSchema, { ...message(['p']), turn: 1 }), ['turn']);
    assert.deepEqual(issuePaths(ContentScorableSchema, { ...content('t'), uri: '/a' }), ['uri']);
  });

  it('round-trips each constructed scorable byte for byte', () => {
    for (const scorable of [surface('/a/b', 'glob'), message(['p1', 'p2']), content('x\ny')]) {
      const json = JSON.stringify(scorable);
      assert.equal(JSON.stringify(ScorableSchema.parse(JSON.parse(json))), json);
    }
  });
});

describe('sameLocator', () => {
  it('compares uri and match kind', () => {
    assert.equal(sameLocator(surface('/a'), surface('/a')), true);
    assert.equal(sameLocator(surface('/a'), surface('/a', 'glob')), false);
    assert.equal(sameLocator(surface('/a'), surface('/b')), false);
  });
});
