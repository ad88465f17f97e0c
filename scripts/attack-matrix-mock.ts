/**
 * Runs the attack library's whole matrix (every objective × every carrier × every strategy) against the mock agent in both modes and prints the results as Markdown tables for
 * docs/attacks.md. Deterministic: the mock has no randomness, so a rerun prints the same tables.
 *
 *   npx tsc -p tsconfig.json && node dist/scripts/attack-matrix-mock.js > /tmp/matrix.md
 */
import { CampaignSchema } from '../src/attacks/campaign.js';
import { CARRIER_IDS, expandMatrix, OBJECTIVE_IDS, STRATEGY_IDS } from '../src/attacks/library/index.js';
import { runCampaign } from '../src/attacks/run-campaign.js';
import { MockAgentTarget } from '../src/targets/mock-agent-target.js';
import { MOCK_MODES, type MockMode } from '../src/targets/mock-planner.js';
import { axisTables, carrierStrategyGrid } from './matrix-tables.js';

const attacks = expandMatrix({ objectives: 'all', carriers: 'all', strategies: 'all' });

const results = new Map<
  MockMode,
  Array<{ attack: string; outcome: 'success' | 'failure' | 'undetermined' | 'error' }>
>();
for (const mode of MOCK_MODES) {
  const campaign = CampaignSchema.parse({
    name: `library-matrix-${mode}`,
    target: { kind: 'mock', mode },
    concurrency: 4,
    attacks,
  });
  const started = Date.now();
  const result = await runCampaign({
    campaign,
    target: new MockAgentTarget({ mode }),
    onProgress: ({ completed, total }) => {
      if (completed % 100 === 0 || completed === total)
        process.stderr.write(`${mode}: ${completed}/${total}\n`);
    },
  });
  process.stderr.write(`${mode}: ${Math.round((Date.now() - started) / 1000)} s\n`);
  results.set(mode, result.attempts);
}

const out = [
  `Matrix: ${OBJECTIVE_IDS.length} objectives × ${CARRIER_IDS.length} carriers × ${STRATEGY_IDS.length} strategies = ${attacks.length} attacks, one attempt each, per mode.`,
  '',
  axisTables(MOCK_MODES.map((mode) => ({ mode, attempts: results.get(mode) ?? [] }))),
  '',
  `**Vulnerable mock, successes per carrier × strategy** (out of ${OBJECTIVE_IDS.length} objectives)`,
  '',
  carrierStrategyGrid({ mode: 'vulnerable', attempts: results.get('vulnerable') ?? [] }),
];
process.stdout.write(`${out.join('\n')}\n`);
