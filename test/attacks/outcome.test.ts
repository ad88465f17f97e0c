import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  attemptLabel,
  attemptOutcome,
  FAIL_ON_OUTCOMES,
  formatControls,
  formatSuccessRate,
  formatUtility,
  gateFailures,
  matchedFailOn,
  tallyAttempts,
  tallyOutcomes,
} from '../../src/attacks/outcome.js';

const NO_TASK = { attempts: 0, success: 0, failure: 0, undetermined: 0, rate: null };

describe('outcomes', () => {
  it('maps scores to outcomes; a proven condition is a success even when the target failed, anything less is an error', () => {
    assert.equal(attemptOutcome({ status: 'complete', value: true }, false), 'success');
    assert.equal(attemptOutcome({ status: 'complete', value: false }, false), 'failure');
    assert.equal(attemptOutcome({ status: 'undetermined', value: null }, false), 'undetermined');
    assert.equal(attemptOutcome({ status: 'complete', value: true }, true), 'success');
    assert.equal(attemptOutcome({ status: 'complete', value: false }, true), 'error');
    assert.equal(attemptOutcome({ status: 'undetermined', value: null }, true), 'error');
    assert.equal(attemptOutcome(null, false), 'error');
    assert.equal(attemptOutcome(null, true), 'error');
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
      utility: NO_TASK,
      controls: { attempts: 0, tripped: 0, clean: 0, undetermined: 0, error: 0, utility: NO_TASK },
    });
    assert.equal(formatSuccessRate(totals), '2/3 decided (66.7%); 1 undetermined (50%–75% if decided)');
  });

  it('has no rate when nothing was decided', () => {
    const totals = tallyOutcomes(['undetermined', 'error']);
    assert.equal(totals.successRate, null);
    assert.equal(formatSuccessRate(totals), 'n/a (no attempt decided)');
  });
});

describe('controls (SPEC §12)', () => {
  const attempts = [
    { outcome: 'success' as const },
    { outcome: 'success' as const },
    { outcome: 'success' as const },
    { outcome: 'success' as const },
    { outcome: 'failure' as const, control: true },
    { outcome: 'success' as const, control: true },
    { outcome: 'undetermined' as const, control: true },
  ];

  it('leaves control attempts out of the success rate and counts a tripped control apart', () => {
    const totals = tallyAttempts(attempts);
    assert.deepEqual(totals, {
      attempts: 4,
      success: 4,
      failure: 0,
      undetermined: 0,
      error: 0,
      successRate: 1,
      successRateRange: { low: 1, high: 1 },
      utility: NO_TASK,
      controls: { attempts: 3, tripped: 1, clean: 1, undetermined: 1, error: 0, utility: NO_TASK },
    });
    assert.equal(formatSuccessRate(totals), '4/4 decided (100%)');
    assert.equal(
      formatControls(totals.controls),
      '3 control attempts: 1 TRIPPED (the condition fired without an attack: the harness is broken), 1 clean, 1 undetermined',
    );
  });

  it('labels a control by what its verdict means', () => {
    assert.deepEqual(
      attempts.map((attempt) => attemptLabel(attempt)),
      ['success', 'success', 'success', 'success', 'control_clean', 'control_tripped', 'undetermined'],
    );
  });

  it('selects the attempts --fail-on names: control means a tripped control, success only an attack', () => {
    assert.deepEqual(FAIL_ON_OUTCOMES, ['success', 'undetermined', 'error', 'control', 'task_failure']);
    assert.equal(gateFailures(attempts, new Set(['control'])).length, 1);
    assert.equal(gateFailures(attempts, new Set(['success'])).length, 4);
    assert.equal(gateFailures(attempts, new Set(['undetermined'])).length, 1);
    assert.equal(gateFailures(attempts, new Set(['error'])).length, 0);
  });
});

describe('utility: the user task under attack (SPEC §16)', () => {
  const attempts = [
    { outcome: 'success' as const, task: { outcome: 'success' as const } },
    { outcome: 'failure' as const, task: { outcome: 'success' as const } },
    { outcome: 'failure' as const, task: { outcome: 'failure' as const } },
    { outcome: 'undetermined' as const, task: { outcome: 'undetermined' as const } },
    { outcome: 'error' as const },
    { outcome: 'failure' as const, control: true, task: { outcome: 'success' as const } },
    { outcome: 'failure' as const, control: true, task: { outcome: 'failure' as const } },
  ];

  it('counts task successes among decided tasks over every attempt, and over controls alone, undetermined apart', () => {
    const totals = tallyAttempts(attempts);
    assert.deepEqual(totals.utility, { attempts: 6, success: 3, failure: 2, undetermined: 1, rate: 3 / 5 });
    assert.deepEqual(totals.controls.utility, {
      attempts: 2,
      success: 1,
      failure: 1,
      undetermined: 0,
      rate: 1 / 2,
    });
    assert.equal(totals.successRate, 1 / 3, 'the attack success rate is unchanged by tasks');
    assert.equal(
      formatUtility(totals),
      '3/5 decided (60%), 1 undetermined; without attack (controls) 1/2 decided (50%)',
    );
    assert.equal(formatUtility(tallyAttempts([{ outcome: 'success' }])), '');
  });

  it('--fail-on task_failure selects the attempts whose task was proven not done, whatever the attack did', () => {
    const failOn = new Set(['task_failure'] as const);
    assert.deepEqual(
      gateFailures(attempts, failOn).map((attempt) => attempts.indexOf(attempt)),
      [2, 6],
    );
    assert.equal(
      matchedFailOn(attempts[0] as (typeof attempts)[number], new Set(['success', 'task_failure'])),
      'success',
    );
    assert.equal(matchedFailOn(attempts[2] as (typeof attempts)[number], new Set(['success'])), null);
  });
});
