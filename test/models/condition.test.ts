import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidLocatorError, InvalidMatcherError, InvalidRecordError } from '../../src/errors.js';
import { ConditionSchema, ContentWrittenSchema, contentWritten } from '../../src/models/condition.js';
import { contains, regex } from '../../src/models/matcher.js';
import { surface } from '../../src/models/scorable.js';
import { issuePaths } from '../support/issues.js';

describe('contentWritten()', () => {
  it('builds an exact condition from a uri, without a matcher', () => {
    assert.deepEqual(contentWritten('/data/out.txt'), {
      conditionType: 'content_written',
      uri: '/data/out.txt',
      match: 'exact',
    });
  });

  it('builds a condition from a surface scorable and a matcher', () => {
    assert.deepEqual(contentWritten(surface('/out/*.sh', 'glob'), contains('rm -rf')), {
      conditionType: 'content_written',
      uri: '/out/*.sh',
      match: 'glob',
      matcher: { matcherType: 'contains', value: 'rm -rf', caseSensitive: false, ignoreWhitespace: true },
    });
  });

  it('checks the locator before any I/O', () => {
    assert.throws(() => contentWritten('/../etc/passwd'), InvalidLocatorError);
    assert.throws(
      () => contentWritten({ scorableType: 'surface', uri: '/a/{b', match: 'glob' }),
      InvalidLocatorError,
    );
  });

  it('rejects a hand-written matcher whose regex does not compile', () => {
    assert.throws(() => contentWritten('/a', regex('(')), InvalidMatcherError);
    assert.throws(
      () =>
        contentWritten('/a', {
          matcherType: 'regex',
          value: '(',
          caseSensitive: false,
          ignoreWhitespace: true,
        }),
      (error: unknown) => error instanceof InvalidRecordError && /matcher\.value/.test(error.message),
    );
  });
});

describe('ContentWrittenSchema', () => {
  it('reads a condition without match as exact', () => {
    assert.deepEqual(
      ContentWrittenSchema.parse({ conditionType: 'content_written', uri: '/a' }),
      contentWritten('/a'),
    );
  });

  it('rejects unknown keys on the condition and on its matcher', () => {
    assert.deepEqual(issuePaths(ContentWrittenSchema, { ...contentWritten('/a'), root: '/ws' }), ['root']);
    assert.deepEqual(
      issuePaths(ContentWrittenSchema, {
        ...contentWritten('/a'),
        matcher: { ...contains('x'), extra: true },
      }),
      ['matcher.extra'],
    );
  });

  it('rejects an empty uri and an unknown conditionType', () => {
    assert.deepEqual(issuePaths(ContentWrittenSchema, { conditionType: 'content_written', uri: '' }), [
      'uri',
    ]);
    assert.deepEqual(issuePaths(ConditionSchema, { conditionType: 'file_deleted', uri: '/a' }), [
      'conditionType',
    ]);
  });
});
