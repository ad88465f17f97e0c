import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidMatcherError, WitnessError } from '../../src/errors.js';
import { contains, equals, MatcherSchema, regex } from '../../src/models/matcher.js';
import { issuePaths } from '../support/issues.js';

describe('matcher constructors', () => {
  it('default to case-insensitive matching that ignores surrounding whitespace', () => {
    assert.deepEqual(contains('x'), {
      matcherType: 'contains',
      value: 'x',
      caseSensitive: false,
      ignoreWhitespace: true,
    });
    assert.deepEqual(equals('x'), {
      matcherType: 'equals',
      value: 'x',
      caseSensitive: false,
      ignoreWhitespace: true,
    });
    assert.deepEqual(regex('x'), {
      matcherType: 'regex',
      value: 'x',
      caseSensitive: false,
      ignoreWhitespace: true,
    });
  });

  it('take caseSensitive and ignoreWhitespace from options', () => {
    assert.deepEqual(contains('x', { caseSensitive: true, ignoreWhitespace: false }), {
      matcherType: 'contains',
      value: 'x',
      caseSensitive: true,
      ignoreWhitespace: false,
    });
  });

  it('reject an invalid regex at construction with a typed InvalidMatcherError', () => {
    assert.throws(
      () => regex('(unclosed'),
      (error: unknown) =>
        error instanceof InvalidMatcherError &&
        error instanceof WitnessError &&
        error.code === 'invalid_matcher' &&
        /value: not a valid JavaScript regular expression/.test(error.message),
    );
  });

  it('validate regex syntax in Unicode mode, rejecting an escape legacy mode would accept', () => {
    assert.throws(() => regex('\\-'), InvalidMatcherError);
    assert.throws(() => regex('a{'), InvalidMatcherError);
  });

  it('reject an option that does not exist instead of ignoring a typo', () => {
    assert.throws(
      () => contains('x', { caseSensitiv: true } as unknown as { caseSensitive: boolean }),
      (error: unknown) => error instanceof InvalidMatcherError && /caseSensitiv/.test(error.message),
    );
  });

  it('reject a value that is not a string', () => {
    assert.throws(() => equals(42 as unknown as string), InvalidMatcherError);
  });

  it('produce JSON that parses back to the same bytes', () => {
    for (const matcher of [contains('a b'), equals('', { ignoreWhitespace: false }), regex('^x$')]) {
      const json = JSON.stringify(matcher);
      assert.equal(JSON.stringify(MatcherSchema.parse(JSON.parse(json))), json);
    }
  });
});

describe('MatcherSchema', () => {
  it('fills in the defaults when reading a matcher that omits them', () => {
    assert.deepEqual(MatcherSchema.parse({ matcherType: 'equals', value: 'x' }), equals('x'));
  });

  it('rejects an unknown key', () => {
    assert.deepEqual(issuePaths(MatcherSchema, { ...contains('x'), flags: 'g' }), ['flags']);
  });

  it('rejects an unknown matcherType', () => {
    assert.deepEqual(issuePaths(MatcherSchema, { matcherType: 'glob', value: 'x' }), ['matcherType']);
  });

  it('rejects an invalid regex read from JSON, naming the value field', () => {
    assert.deepEqual(issuePaths(MatcherSchema, { matcherType: 'regex', value: '[' }), ['value']);
  });

  it('rejects options of the wrong type', () => {
    assert.deepEqual(
      issuePaths(MatcherSchema, { matcherType: 'contains', value: 'x', caseSensitive: 'no' }),
      ['caseSensitive'],
    );
  });
});
