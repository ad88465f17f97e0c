import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Campaign } from '../../../src/attacks/campaign.js';
import { loadCampaignFile } from '../../../src/attacks/campaign-file.js';
import { preflightCampaign } from '../../../src/attacks/preflight/campaign-preflight.js';
import { programsOf } from '../../../src/attacks/preflight/program-check.js';
import { type RunningModelServer, startModelServer } from '../../../src/model-server/model-server.js';
import { AGENT_PRESET_MODULES } from '../../../src/targets/presets/preset-registry.js';
import { isPresetAgent } from '../../../src/targets/target-config.js';
import { needsBubblewrap } from '../../support/requirements.js';

/**
 * Every example campaign passes its preflight as shipped (the bait check included), so what the README
 * and docs/agents.md tell a newcomer to run is not refused. Two things of the machine are stood in for:
 * every model endpoint is the scripted model (`witness model serve`, on a free loopback port: the
 * examples name 127.0.0.1:8719, and the chat example a provider this test cannot reach), and every
 * `apiKeyEnv` is set to a placeholder. An agent CLI that is not installed here (the presets' CLIs are not
 * dependencies of Witness; CI installs Qwen Code and names it in WITNESS_QWEN_BIN) must be the one
 * failure, with the fix that installs it. Without bubblewrap, the examples that start a process skip.
 */

const EXAMPLES = path.resolve(import.meta.dirname, '../../../../examples');
const bubblewrap = await needsBubblewrap();
const qwenBin = process.env.WITNESS_QWEN_BIN;
const PATH = [qwenBin === undefined ? [] : [path.dirname(qwenBin)], process.env.PATH ?? ''].flat().join(':');

let model: RunningModelServer;
before(async () => {
  model = await startModelServer({ port: 0 });
});
after(() => model.close());

/** The campaign with every model endpoint at the scripted model. */
function atScriptedModel(campaign: Campaign): Campaign {
  const url = `${model.url}/v1`;
  const out = structuredClone(campaign);
  const target = out.target;
  if (isPresetAgent(target)) target.model.baseUrl = url;
  else if (target.kind === 'chat') target.baseUrl = url;
  else if (target.kind === 'agent' && target.planner.kind === 'chat') target.planner.baseUrl = url;
  else if (target.kind === 'mcp' && target.agent.planner === 'chat') target.agent.baseUrl = url;
  for (const attack of out.attacks) if (attack.attacker !== undefined) attack.attacker.model.baseUrl = url;
  return out;
}

function keysOf(campaign: Campaign): Record<string, string> {
  const target = campaign.target;
  const names = [
    isPresetAgent(target) ? target.model.apiKeyEnv : undefined,
    target.kind === 'chat' ? target.apiKeyEnv : undefined,
    ...campaign.attacks.map((attack) => attack.attacker?.model.apiKeyEnv),
  ];
  return Object.fromEntries(names.flatMap((name) => (name === undefined ? [] : [[name, 'placeholder-key']])));
}

const examples = await Promise.all(
  readdirSync(EXAMPLES)
    .filter((name) => name.endsWith('.yaml'))
    .map(async (name) => ({ name, campaign: await loadCampaignFile(path.join(EXAMPLES, name)) })),
);

/**
 * The examples of up to `maxAttacks` attacks (`small`: the fast lane) or of more (`large`: the library
 * matrices, whose bait check copies the template once per attack: the heavy lane); together, every one.
 */
export function describeExamplePreflights(size: 'small' | 'large', maxAttacks = 10): void {
  const chosen = examples.filter(
    ({ campaign }) => campaign.attacks.length <= maxAttacks === (size === 'small'),
  );
  describe(`the example campaigns pass their preflight (${size}: ${chosen.map(({ name }) => name).join(', ')})`, () => {
    it('are some', () => assert.ok(chosen.length > 0));
    for (const { name, campaign: shipped } of chosen) {
      const target = shipped.target;
      const skip = programsOf(target).length > 0 && shipped.sandbox !== 'none' ? bubblewrap : false;
      it(name, { skip }, async () => {
        const file = path.join(EXAMPLES, name);
        const campaign = atScriptedModel(shipped);
        const result = await preflightCampaign(campaign, {
          campaignFile: file,
          hostEnv: { PATH, HOME: process.env.HOME, ...keysOf(campaign) },
          bait: true,
        });
        const failures = result.checks.filter((check) => check.status === 'fail');
        const only = failures[0];
        if (
          isPresetAgent(target) &&
          failures.length === 1 &&
          only?.check === 'program' &&
          /not found on the agent’s PATH/.test(only.detail)
        ) {
          // The CLI is not installed here: the preflight says how to install it.
          const { npmPackage } = AGENT_PRESET_MODULES[target.preset];
          assert.ok(only.fix?.includes(`npm install -g ${npmPackage}`), only.fix);
          return;
        }
        assert.deepEqual(failures, [], JSON.stringify(result.checks, null, 2));
        assert.ok(result.checks.some((check) => check.check === 'bait' && check.status === 'pass'));
      });
    }
  });
}
