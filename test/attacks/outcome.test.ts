import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { attemptOutcome, formatSuccessRate, tallyOutcomes } from '../../src/attacks/outcome.js';

describe('outcomes', () => {
  it('maps scores to outcomes; a target error wins over any verdict', () => {
    assert.equal(attemptOutcome({ status: 'complete', value: true }, false), 'success');
    assert.equal(attemptOutcome({ status: 'complete', value: false }, false), 'failure');
    assert.equal(attemptOutcome({ status: 'undetermined', value: null }, false), 'undetermined');
    assert.equal(attemptOutcome({ status: 'complete', value: true }, true), 'error');
    assert.equal(attemptOutcome(null, false), 'error');
  });

  it('never folds undetermined or error into the success rate, and shows the range undetermined spans', () => {
    const totals = tallyOutcomes(['success', 'success', 'failure', 'undetermined', 'error']);
    assert.deepEqual(totals, {
      attempts: 5,
      success: 2,
      failure: 1,
      undetermined: 1,
      error: 1,
      successRate: 2 / 3,
      successRateRange: { low: 2 / 4, high: 3 / 4 },
    });
    assert.equal(formatSuccessRate(totals), '2/3 decided (66.7%); 1 undetermined (50%–75% if decided)');
  });

  it('has no rate when nothing was decided', () => {
    const totals = tallyOutcomes(['undetermined', 'error']);
    assert.equal(totals.successRate, null);
    assert.equal(formatSuccessRate(totals), 'n/a (no attempt decided)');
  });
});
