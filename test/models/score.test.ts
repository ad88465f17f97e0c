import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidRecordError, UndeterminedScoreError, WitnessError } from '../../src/errors.js';
import { contentWritten } from '../../src/models/condition.js';
import { expectation } from '../../src/models/expectation.js';
import { contains } from '../../src/models/matcher.js';
import { parseRecord } from '../../src/models/record.js';
import { message, surface } from '../../src/models/scorable.js';
import { type Score, ScoreSchema, scoreValue } from '../../src/models/score.js';
import { issuePaths } from '../support/issues.js';
import { TEST_SOURCE } from '../support/observations.js';

function scoreInput(overrides: Record<string, unknown> = {}) {
  return {
    id: 'score-1',
    status: 'complete',
    value: true,
    scoreType: 'true_false',
    description: 'content_written at /data/out.txt',
    rationale: '/data/out.txt (exact) holds nonempty content: proven by "/data/out.txt".',
    scorable: surface('/data/out.txt'),
    scorer: { type: 'file_write_scorer', version: '1', params: {}, children: { source: TEST_SOURCE } },
    scoredExpectation: expectation([contentWritten('/data/out.txt', contains('pwned'))], 'write the file'),
    observationIds: ['obs-1'],
    createdAt: '2025-01-02T03:04:06.000Z',
    metadata: {},
    ...overrides,
  };
}

function built(overrides: Record<string, unknown> = {}): Score {
  return parseRecord(ScoreSchema, scoreInput(overrides), 'score');
}

describe('ScoreSchema', () => {
  it('accepts complete scores with a boolean and undetermined scores with null', () => {
    for (const overrides of [
      { status: 'complete', value: true },
      { status: 'complete', value: false },
      { status: 'undetermined', value: null },
    ]) {
      assert.deepEqual(issuePaths(ScoreSchema, scoreInput(overrides)), []);
    }
  });

  it('rejects a complete score without a value, naming value', () => {
    assert.deepEqual(issuePaths(ScoreSchema, scoreInput({ status: 'complete', value: null })), ['value']);
  });

  it('rejects an undetermined score with a boolean, naming value', () => {
    for (const value of [true, false]) {
      assert.deepEqual(issuePaths(ScoreSchema, scoreInput({ status: 'undetermined', value })), ['value']);
    }
  });

  it('rejects an unknown status, scoreType, key, or a nested unknown key', () => {
    assert.deepEqual(issuePaths(ScoreSchema, scoreInput({ status: 'error' })), ['status']);
    assert.deepEqual(issuePaths(ScoreSchema, scoreInput({ scoreType: 'float_scale' })), ['scoreType']);
    assert.deepEqual(issuePaths(ScoreSchema, scoreInput({ passed: true })), ['passed']);
    assert.deepEqual(
      issuePaths(
        ScoreSchema,
        scoreInput({ scoredExpectation: { schemaVersion: 1, conditions: [], note: '' } }),
      ),
      ['scoredExpectation.note'],
    );
  });

  it('rejects a scored expectation whose schemaVersion is the string "1"', () => {
    assert.deepEqual(
      issuePaths(ScoreSchema, scoreInput({ scoredExpectation: { schemaVersion: '1', conditions: [] } })),
      ['scoredExpectation.schemaVersion'],
    );
  });

  it('rejects an empty observation id or messagePieceId and a non-UTC createdAt', () => {
    assert.deepEqual(issuePaths(ScoreSchema, scoreInput({ observationIds: [''] })), ['observationIds[0]']);
    assert.deepEqual(issuePaths(ScoreSchema, scoreInput({ messagePieceId: '' })), ['messagePieceId']);
    assert.deepEqual(issuePaths(ScoreSchema, scoreInput({ createdAt: '2025-01-02 03:04:06' })), [
      'createdAt',
    ]);
  });

  it('round-trips scores byte for byte, with and without messagePieceId', () => {
    for (const score of [
      built(),
      built({ status: 'undetermined', value: null, observationIds: [] }),
      built({ scorable: message(['p1']), messagePieceId: 'p1', metadata: { turn: 2, tags: ['a', null] } }),
    ]) {
      const json = JSON.stringify(score);
      assert.equal(JSON.stringify(ScoreSchema.parse(JSON.parse(json))), json);
    }
  });

  it('reports a broken score read through parseRecord as an InvalidRecordError', () => {
    assert.throws(
      () => parseRecord(ScoreSchema, scoreInput({ value: null }), 'score'),
      (error: unknown) =>
        error instanceof InvalidRecordError &&
        error.issues.length === 1 &&
        error.issues[0] === 'value: value is null exactly when status is "undetermined"',
    );
  });
});

describe('scoreValue', () => {
  it('returns the boolean of a complete score', () => {
    assert.equal(scoreValue(built({ value: true })), true);
    assert.equal(scoreValue(built({ value: false })), false);
  });

  it('throws UndeterminedScoreError for an undetermined score, carrying its rationale', () => {
    const score = built({ status: 'undetermined', value: null, rationale: 'gaps: read_failed' });
    assert.throws(
      () => scoreValue(score),
      (error: unknown) =>
        error instanceof UndeterminedScoreError &&
        error instanceof WitnessError &&
        error.code === 'undetermined_score' &&
        error.message.endsWith('gaps: read_failed'),
    );
  });

  it('throws rather than treat a null value as false, even if the status claims complete', () => {
    assert.throws(
      () => scoreValue({ status: 'complete', value: null, rationale: '' }),
      UndeterminedScoreError,
    );
  });
});
