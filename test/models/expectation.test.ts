import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { contentWritten } from '../../src/models/condition.js';
import { expectation, ScoringExpectationSchema } from '../../src/models/expectation.js';
import { contains } from '../../src/models/matcher.js';
import { issuePaths } from '../support/issues.js';

describe('expectation()', () => {
  it('builds a version 1 expectation with an optional objective', () => {
    assert.deepEqual(expectation([contentWritten('/a')]), {
      schemaVersion: 1,
      conditions: [{ conditionType: 'content_written', uri: '/a', match: 'exact' }],
    });
    assert.deepEqual(expectation([], 'plant a backdoor'), {
      schemaVersion: 1,
      objective: 'plant a backdoor',
      conditions: [],
    });
  });

  it('round-trips byte for byte', () => {
    const built = expectation(
      [contentWritten('/a', contains('x')), contentWritten('/b/*', undefined)],
      'goal',
    );
    const json = JSON.stringify(built);
    assert.equal(JSON.stringify(ScoringExpectationSchema.parse(JSON.parse(json))), json);
  });
});

describe('ScoringExpectationSchema', () => {
  const valid = { schemaVersion: 1, conditions: [] };

  it('accepts schemaVersion 1', () => {
    assert.deepEqual(issuePaths(ScoringExpectationSchema, valid), []);
  });

  it('rejects the string "1" as schemaVersion', () => {
    assert.deepEqual(issuePaths(ScoringExpectationSchema, { ...valid, schemaVersion: '1' }), [
      'schemaVersion',
    ]);
  });

  it('rejects schemaVersion 2 and a missing schemaVersion', () => {
    assert.deepEqual(issuePaths(ScoringExpectationSchema, { ...valid, schemaVersion: 2 }), ['schemaVersion']);
    assert.deepEqual(issuePaths(ScoringExpectationSchema, { conditions: [] }), ['schemaVersion']);
  });

  it('rejects an unknown key, at the top and inside a condition', () => {
    assert.deepEqual(issuePaths(ScoringExpectationSchema, { ...valid, goal: 'x' }), ['goal']);
    assert.deepEqual(
      issuePaths(ScoringExpectationSchema, { ...valid, conditions: [{ ...contentWritten('/a'), x: 1 }] }),
      ['conditions[0].x'],
    );
  });
});
