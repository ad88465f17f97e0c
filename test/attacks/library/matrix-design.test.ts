import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseCampaign } from '../../../src/attacks/campaign-file.js';
import {
  CARRIER_IDS,
  libraryAttackId,
  OBJECTIVE_IDS,
  STRATEGY_IDS,
} from '../../../src/attacks/library/library-ids.js';
import { expandMatrix } from '../../../src/attacks/library/matrix.js';
import { designCells } from '../../../src/attacks/library/matrix-design.js';
import { InvalidCampaignError } from '../../../src/errors.js';

const ALL = { objectives: OBJECTIVE_IDS, carriers: CARRIER_IDS, strategies: STRATEGY_IDS };

describe('matrix designs', () => {
  it('full is every cell, objectives outermost', () => {
    const cells = designCells(ALL, 'full');
    assert.equal(cells.length, 19 * 9 * 10);
    assert.equal(new Set(cells.map(libraryAttackId)).size, cells.length);
    assert.deepEqual(cells[0], { objective: 'git-hook', carrier: 'readme', strategy: 'plain' });
    assert.deepEqual(cells[1], { objective: 'git-hook', carrier: 'readme', strategy: 'authority' });
  });

  it('covering: every carrier × strategy pair exactly once, every objective 4 or 5 times', () => {
    const cells = designCells(ALL, 'covering');
    assert.equal(cells.length, 90);
    const pairs = cells.map((cell) => `${cell.carrier}/${cell.strategy}`);
    assert.equal(new Set(pairs).size, 90);
    const perObjective = new Map<string, number>();
    for (const cell of cells) perObjective.set(cell.objective, (perObjective.get(cell.objective) ?? 0) + 1);
    assert.deepEqual([...perObjective.keys()], [...OBJECTIVE_IDS], 'every objective, in the library order');
    assert.deepEqual(
      [...new Set(perObjective.values())].sort(),
      [4, 5],
      '90 cells over 19 objectives: 14 five times, 5 four times',
    );
    // Each carrier meets ten different objectives (its ten strategies), not the same few again.
    for (const carrier of CARRIER_IDS) {
      const objectives = cells.filter((cell) => cell.carrier === carrier).map((cell) => cell.objective);
      assert.equal(new Set(objectives).size, 10, carrier);
    }
    assert.deepEqual(cells.slice(0, 3), [
      { objective: 'git-hook', carrier: 'readme', strategy: 'plain' },
      { objective: 'shell-rc', carrier: 'readme', strategy: 'authority' },
      { objective: 'ssh-authorized-key', carrier: 'readme', strategy: 'urgency' },
    ]);
    assert.deepEqual(designCells(ALL, 'covering'), cells, 'deterministic');
  });

  it('covering with more objectives than pairs deals the pairs again until every objective has a cell', () => {
    const cells = designCells(
      { objectives: OBJECTIVE_IDS, carriers: ['readme', 'tool-output'], strategies: ['plain', 'base64'] },
      'covering',
    );
    assert.equal(cells.length, OBJECTIVE_IDS.length);
    assert.deepEqual(
      cells.map((cell) => cell.objective),
      [...OBJECTIVE_IDS],
    );
    assert.equal(new Set(cells.map(libraryAttackId)).size, cells.length, 'no cell twice');
    assert.equal(new Set(cells.map((cell) => `${cell.carrier}/${cell.strategy}`)).size, 4);
  });

  it('a campaign says design: covering; an unknown design is named with its choices', () => {
    const text = (design: string) =>
      `name: m\ntarget: { kind: mock, mode: vulnerable }\nmatrix:\n  objectives: all\n  carriers: all\n  strategies: all\n  design: ${design}\n`;
    const campaign = parseCampaign(text('covering'), 'c.yaml');
    assert.deepEqual(
      campaign.attacks.map((attack) => attack.id),
      expandMatrix({ objectives: 'all', carriers: 'all', strategies: 'all', design: 'covering' }).map(
        (attack) => attack.id,
      ),
    );
    assert.equal(campaign.attacks.length, 90);
    assert.throws(
      () => parseCampaign(text('random'), 'c.yaml'),
      (error: unknown) =>
        error instanceof InvalidCampaignError &&
        error.issues.length === 1 &&
        /^c\.yaml:7:11: matrix\.design: the design is one of: full, covering$/.test(error.issues[0] ?? ''),
    );
  });
});
