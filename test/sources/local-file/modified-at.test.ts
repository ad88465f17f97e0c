import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { modifiedAtOf } from '../../../src/sources/local-file/modified-at.js';
import { sampleSize } from '../../support/sample-size.js';

/** The hand-built timestamp must be `toISOString` of the same time, everywhere the clamps let it go. */

const EARLIEST = Date.parse('0000-01-01T00:00:00.000Z');
const LATEST = Date.parse('9999-12-31T23:59:59.999Z');

describe('modifiedAt timestamps', () => {
  it('equal toISOString on the edges: years 0000 and 9999, every leap rule, either side of 1970', () => {
    const probes = [
      EARLIEST,
      EARLIEST + 0.5,
      LATEST,
      LATEST - 0.25,
      0,
      0.999,
      -0.5, // truncated towards zero, as the Date constructor does: 1970-01-01T00:00:00.000Z
      -1,
      -1.5,
      -999.999,
      -86_400_000,
      -86_400_001,
    ];
    for (const day of [
      '0000-02-29', // year 0: divisible by 400, a leap year
      '0100-02-28',
      '0100-03-01', // 100: not a leap year
      '0400-02-29',
      '1900-02-28',
      '1900-03-01',
      '1969-12-31',
      '1972-02-29',
      '2000-02-29',
      '2024-02-29',
      '2100-03-01',
      '9996-02-29',
    ]) {
      const start = Date.parse(`${day}T00:00:00.000Z`);
      probes.push(start, start - 1, start + 86_399_999, start + 86_400_000);
    }
    for (const ms of probes) assert.equal(modifiedAtOf(ms), new Date(ms).toISOString(), `at ${ms}`);
  });

  const times = sampleSize(2_000_000);
  it(`equal toISOString on ${times.toLocaleString('en')} random times across years 0000–9999`, () => {
    // A seeded generator, so a failure is reproducible (xorshift32).
    let seed = 0x9e3779b9;
    const next = () => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) / 2 ** 32;
    };
    let checked = 0;
    for (let i = 0; i < times; i++) {
      const ms = EARLIEST + next() * (LATEST - EARLIEST);
      const ours = modifiedAtOf(ms);
      const theirs = new Date(ms).toISOString();
      if (ours !== theirs) assert.fail(`at ${ms}: ${ours} instead of ${theirs}`);
      checked++;
    }
    assert.equal(checked, times);
  });

  it('equal toISOString through runs of times in the same second (the kept second) and across seconds', () => {
    const starts = [-2_500, 0, Date.parse('2000-02-29T23:59:58.000Z'), LATEST - 2_500, EARLIEST];
    for (const start of starts) {
      for (let ms = start; ms <= Math.min(start + 2_500, LATEST); ms += 0.75) {
        assert.equal(modifiedAtOf(ms), new Date(ms).toISOString(), `at ${ms}`);
      }
    }
    // Back to an earlier second after a later one, and the same millisecond twice.
    for (const ms of [5_000, 1_000, 1_000, 5_000, -1_000, -1_000.5, 5_000.9]) {
      assert.equal(modifiedAtOf(ms), new Date(ms).toISOString(), `at ${ms}`);
    }
  });

  it('clamps what has no four-digit year, and maps what is not a number to the epoch', () => {
    assert.equal(modifiedAtOf(Date.parse('+010000-01-01T00:00:00Z')), '9999-12-31T23:59:59.999Z');
    assert.equal(modifiedAtOf(Number.MAX_VALUE), '9999-12-31T23:59:59.999Z');
    assert.equal(modifiedAtOf(Date.parse('-000001-12-31T00:00:00Z')), '0000-01-01T00:00:00.000Z');
    assert.equal(modifiedAtOf(Number.NaN), '1970-01-01T00:00:00.000Z');
    assert.equal(modifiedAtOf(Number.POSITIVE_INFINITY), '1970-01-01T00:00:00.000Z');
    assert.equal(modifiedAtOf(1_764_633_600_123.9), '2025-12-02T00:00:00.123Z');
  });
});
