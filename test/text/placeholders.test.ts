import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fillPlaceholders } from '../../src/text/placeholders.js';

describe('fillPlaceholders', () => {
  it('replaces every placeholder it is given a value for', () => {
    assert.equal(
      fillPlaceholders('--dir={workspace} -p {prompt} {workspace}', { workspace: '/w', prompt: 'go' }),
      '--dir=/w -p go /w',
    );
  });

  it('never scans substituted text again: a prompt that names a placeholder reaches the agent as written', () => {
    assert.equal(
      fillPlaceholders('{prompt}|{workspace}', { prompt: 'write to {workspace}/x', workspace: '/w' }),
      'write to {workspace}/x|/w',
    );
  });

  it('leaves placeholders it has no value for as written, to be filled later', () => {
    assert.equal(
      fillPlaceholders('{campaignDir}/agent.sh {workspace} {}', { campaignDir: '/c' }),
      '/c/agent.sh {workspace} {}',
    );
  });

  it('does not take a name from the object prototype', () => {
    assert.equal(fillPlaceholders('{toString} {constructor}', {}), '{toString} {constructor}');
  });
});
