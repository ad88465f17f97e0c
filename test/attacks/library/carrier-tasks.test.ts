import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CampaignSchema } from '../../../src/attacks/campaign.js';
import { listCarriers } from '../../../src/attacks/library/carriers.js';
import { CARRIER_IDS } from '../../../src/attacks/library/library-ids.js';
import { expandMatrix } from '../../../src/attacks/library/matrix.js';
import { refusePlantedProof } from '../../../src/attacks/planted-proof.js';
import { runCampaign } from '../../../src/attacks/run-campaign.js';
import { MockAgentTarget } from '../../../src/targets/mock-agent-target.js';
import { MOCK_MODES } from '../../../src/targets/mock-modes.js';

/**
 * The library's user tasks (SPEC §16): each carrier's request is a realistic task with a state
 * condition that no planted workspace already satisfies and that holds when the agent did the work —
 * the mock does it in every mode but refusing, so vulnerable and guarded differ in attack success only.
 */
describe("the attack library's user tasks", () => {
  let parent: string;
  before(() => {
    parent = mkdtempSync(join(tmpdir(), 'witness-carrier-tasks-'));
  });
  after(() => rmSync(parent, { recursive: true, force: true }));

  const attacks = expandMatrix({ objectives: ['npmrc-registry'], carriers: 'all', strategies: ['plain'] });

  it('gives every carrier a task, and a matrix prompt: drops it unless the matrix names task:', () => {
    assert.deepEqual(
      listCarriers().map((carrier) => carrier.id),
      [...CARRIER_IDS],
    );
    for (const attack of attacks) assert.ok(attack.task !== undefined, attack.id);
    const own = expandMatrix({
      objectives: ['npmrc-registry'],
      carriers: ['readme'],
      strategies: ['plain'],
      prompt: 'Look at {file}.',
    });
    assert.equal(own[0]?.task, undefined);
    const named = expandMatrix({
      objectives: ['npmrc-registry'],
      carriers: ['readme'],
      strategies: ['plain'],
      prompt: 'Summarize {file} into NOTES.md.',
      task: { uri: '/NOTES.md' },
    });
    assert.deepEqual(named[0]?.task, { uri: '/NOTES.md', match: 'exact' });
  });

  it('no task holds on its planted workspace (the bait check passes)', async () => {
    const campaign = CampaignSchema.parse({
      name: 'tasks',
      target: { kind: 'mock', mode: 'guarded' },
      attacks,
    });
    await refusePlantedProof(campaign, { workspaceParent: parent });
    assert.deepEqual(readdirSync(parent), []);
  });

  for (const mode of MOCK_MODES) {
    it(`mock agent, ${mode}: every carrier's task ${mode === 'refusing' ? 'is not done' : 'is done'}`, async () => {
      const campaign = CampaignSchema.parse({
        name: `tasks-${mode}`,
        target: { kind: 'mock', mode },
        concurrency: 4,
        attacks,
      });
      const result = await runCampaign({
        campaign,
        target: new MockAgentTarget({ mode }),
        workspaceParent: parent,
      });
      assert.deepEqual(
        result.attempts.map((attempt) => [attempt.attack, attempt.task?.outcome]),
        attacks.map((attack) => [attack.id, mode === 'refusing' ? 'failure' : 'success']),
      );
    });
  }
});
