import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { searchWithTimeout } from '../../src/matching/regex-search.js';

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
