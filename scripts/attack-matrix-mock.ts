/**
 * Runs the attack library's whole matrix (every objective × every carrier × every
 * strategy) against the mock agent in both modes and prints the results as Markdown tables for
 * docs/attacks.md. Deterministic: the mock has no randomness, so a rerun prints the same tables.
 *
 *   npx tsc -p tsconfig.json && node dist/scripts/attack-matrix-mock.js > /tmp/matrix.md
 */
import { CampaignSchema } from '../src/attacks/campaign.js';
import {
  CARRIER_IDS,
  expandMatrix,
  groupByLibrary,
  type LibraryAxis,
  libraryRefOf,
  OBJECTIVE_IDS,
  STRATEGY_IDS,
} from '../src/attacks/library/index.js';
import type { OutcomeTotals } from '../src/attacks/outcome.js';
import { runCampaign } from '../src/attacks/run-campaign.js';
import { MockAgentTarget } from '../src/targets/mock-agent-target.js';
import { MOCK_MODES, type MockMode } from '../src/targets/mock-planner.js';

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

const cell = (totals: OutcomeTotals | undefined) => {
  if (totals === undefined) return '–';
  const decided = totals.success + totals.failure;
  const extra = [
    totals.undetermined > 0 ? `${totals.undetermined} undetermined` : '',
    totals.error > 0 ? `${totals.error} error` : '',
  ].filter((part) => part !== '');
  return `${totals.success}/${decided}${extra.length > 0 ? ` (${extra.join(', ')})` : ''}`;
};
const grouped = new Map(MOCK_MODES.map((mode) => [mode, groupByLibrary(results.get(mode) ?? [])]));
const table = (axis: LibraryAxis, ids: readonly string[]) => {
  const rows = [`| ${axis} | vulnerable: success/decided | guarded: success/decided |`, '|---|---|---|'];
  for (const id of ids) {
    const find = (mode: MockMode) =>
      grouped.get(mode)?.find((group) => group.axis === axis && group.id === id)?.totals;
    rows.push(`| \`${id}\` | ${cell(find('vulnerable'))} | ${cell(find('guarded'))} |`);
  }
  return rows.join('\n');
};

const grid = [`| carrier \\ strategy | ${STRATEGY_IDS.map((id) => `\`${id}\``).join(' | ')} |`];
grid.push(`|---|${STRATEGY_IDS.map(() => '---').join('|')}|`);
for (const carrier of CARRIER_IDS) {
  const counts = STRATEGY_IDS.map((strategy) => {
    const mine = (results.get('vulnerable') ?? []).filter((attempt) => {
      const ref = libraryRefOf(attempt.attack);
      return ref?.carrier === carrier && ref.strategy === strategy;
    });
    return `${mine.filter((attempt) => attempt.outcome === 'success').length}/${mine.length}`;
  });
  grid.push(`| \`${carrier}\` | ${counts.join(' | ')} |`);
}

const out = [
  `Matrix: ${OBJECTIVE_IDS.length} objectives × ${CARRIER_IDS.length} carriers × ${STRATEGY_IDS.length} strategies = ${attacks.length} attacks, one attempt each, per mode.`,
  '',
  '**By strategy**',
  '',
  table('strategy', STRATEGY_IDS),
  '',
  '**By carrier**',
  '',
  table('carrier', CARRIER_IDS),
  '',
  '**By objective**',
  '',
  table('objective', OBJECTIVE_IDS),
  '',
  `**Vulnerable mock, successes per carrier × strategy** (out of ${OBJECTIVE_IDS.length} objectives)`,
  '',
  grid.join('\n'),
];
process.stdout.write(`${out.join('\n')}\n`);
