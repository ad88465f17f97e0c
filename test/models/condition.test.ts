import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidLocatorError, InvalidMatcherError, InvalidRecordError } from '../../src/errors.js';
import {
  ConditionSchema,
  ContentWrittenSchema,
  conditionSurface,
  contentWritten,
  fileCreated,
  fileDeleted,
  fileModified,
} from '../../src/models/condition.js';
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
    assert.deepEqual(issuePaths(ConditionSchema, { conditionType: 'file_renamed', uri: '/a' }), [
      'conditionType',
    ]);
  });
});

describe('change conditions and surfaces (SPEC §12)', () => {
  it('builds file_created, file_deleted and file_modified, with the home surface when asked', () => {
    assert.deepEqual(fileDeleted('/SENTINEL.md'), {
      conditionType: 'file_deleted',
      uri: '/SENTINEL.md',
      match: 'exact',
    });
    assert.deepEqual(fileCreated(surface('/.vscode/*.json', 'glob')), {
      conditionType: 'file_created',
      uri: '/.vscode/*.json',
      match: 'glob',
    });
    assert.deepEqual(fileModified('/.bashrc', { surface: 'home' }), {
      conditionType: 'file_modified',
      uri: '/.bashrc',
      match: 'exact',
      surface: 'home',
    });
  });

  it('adds executable to content_written only when true, and keeps the workspace implicit', () => {
    assert.deepEqual(contentWritten('/hook', contains('curl'), { executable: true, surface: 'workspace' }), {
      conditionType: 'content_written',
      uri: '/hook',
      match: 'exact',
      matcher: { matcherType: 'contains', value: 'curl', caseSensitive: false, ignoreWhitespace: true },
      executable: true,
    });
    assert.equal(conditionSurface(fileCreated('/x', { surface: 'home' })), 'home');
    assert.equal(conditionSurface(contentWritten('/x')), 'workspace');
  });

  it('refuses a matcher on a change condition and an unknown surface', () => {
    assert.deepEqual(
      issuePaths(ConditionSchema, {
        conditionType: 'file_created',
        uri: '/a',
        matcher: { matcherType: 'contains', value: 'x' },
      }),
      ['matcher'],
    );
    assert.deepEqual(
      issuePaths(ConditionSchema, { conditionType: 'file_deleted', uri: '/a', surface: 'tmp' }),
      ['surface'],
    );
  });
});
