import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { loadCampaignFile } from '../../src/attacks/campaign-file.js';

/**
 * Every example campaign is valid as shipped, and an attack the example calls a control is marked
 * `control: true`: otherwise its clean result counts in the success rate (2 of 3 where the truth is 2 of 2)
 * and a control that trips is never flagged.
 */

const EXAMPLES = path.resolve(import.meta.dirname, '../../../examples');

describe('the example campaigns', () => {
  const files = readdirSync(EXAMPLES).filter((name) => name.endsWith('.yaml'));
  it('are found', () => {
    assert.ok(files.length >= 8, files.join(', '));
  });
  for (const name of files) {
    it(`${name}: loads, and its controls are marked control: true`, async () => {
      const campaign = await loadCampaignFile(path.join(EXAMPLES, name));
      for (const attack of campaign.attacks) {
        const calledControl = /control/i.test(`${attack.id} ${attack.objective ?? ''}`);
        assert.equal(attack.control === true, calledControl, `${name}: attack ${attack.id}`);
      }
    });
  }
});
