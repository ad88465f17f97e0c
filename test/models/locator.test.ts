import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidLocatorError } from '../../src/errors.js';
import { matchesSegment, parseLocator } from '../../src/models/locator.js';

describe('parseLocator', () => {
  it('rejects a ".." segment before any I/O', () => {
    assert.throws(() => parseLocator('/a/../b'), InvalidLocatorError);
  });

  it('rejects the root itself and the empty path', () => {
    for (const uri of ['/', '']) assert.throws(() => parseLocator(uri), /inside the root/);
  });

  it('collapses runs of ** and compiles each glob segment', () => {
    const parsed = parseLocator('/data/**/**/*.{sh,py}', 'glob');
    assert.deepEqual(parsed.segments, ['data', '**', '*.{sh,py}']);
    const last = parsed.glob?.[2];
    assert.ok(last);
    assert.equal(matchesSegment(last, 'run.sh'), true);
    assert.equal(matchesSegment(last, '.hidden.py'), true);
    assert.equal(matchesSegment(last, 'run.js'), false);
  });
});
