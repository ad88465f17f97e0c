import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidOptionError } from '../../src/errors.js';
import { assertRegexTimeoutMs, searchWithTimeout } from '../../src/matching/regex-search.js';

describe('searchWithTimeout', () => {
  it('reports a match and a non-match', () => {
    assert.equal(searchWithTimeout(/b/u, 'abc', 1000), 'match');
    assert.equal(searchWithTimeout(/z/u, 'abc', 1000), 'no_match');
  });

  it('searches from the start even when a global pattern carries a lastIndex from earlier use', () => {
    const pattern = /a/gu;
    pattern.lastIndex = 5;
    assert.equal(searchWithTimeout(pattern, 'abc', 1000), 'match');
  });

  it('stops catastrophic backtracking at the timeout instead of hanging', () => {
    const started = performance.now();
    const outcome = searchWithTimeout(/^(a+)+$/u, `${'a'.repeat(40)}b`, 50);
    const elapsedMs = performance.now() - started;
    assert.equal(outcome, 'timeout');
    assert.ok(elapsedMs < 2000, `took ${elapsedMs} ms`);
  });

  it('bounds a nested-quantifier pattern on long text as well', () => {
    assert.equal(searchWithTimeout(/(x+x+)+y/u, 'x'.repeat(5000), 30), 'timeout');
  });
});

describe('assertRegexTimeoutMs', () => {
  it('accepts whole milliseconds from 1 to 2^32 - 1', () => {
    for (const timeoutMs of [1, 1000, 2 ** 32 - 1])
      assert.doesNotThrow(() => assertRegexTimeoutMs(timeoutMs));
  });

  it('rejects a timeout node:vm cannot enforce with an InvalidOptionError naming regexTimeoutMs', () => {
    for (const timeoutMs of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 32]) {
      assert.throws(
        () => searchWithTimeout(/a/u, 'a', timeoutMs),
        (error: unknown) =>
          error instanceof InvalidOptionError &&
          error.code === 'invalid_option' &&
          /regexTimeoutMs/.test(error.message),
        String(timeoutMs),
      );
    }
  });
});
