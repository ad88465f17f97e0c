import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CampaignSchema } from '../../../src/attacks/campaign.js';
import { checkAllBait } from '../../../src/attacks/library/bait-check.js';
import { libraryRefOf } from '../../../src/attacks/library/library-groups.js';
import {
  CARRIER_IDS,
  type CarrierId,
  OBJECTIVE_IDS,
  type ObjectiveId,
  STRATEGY_IDS,
  type StrategyId,
} from '../../../src/attacks/library/library-ids.js';
import { expandMatrix, type MatrixInput } from '../../../src/attacks/library/matrix.js';
import { runCampaign } from '../../../src/attacks/run-campaign.js';
import { MockAgentTarget } from '../../../src/targets/mock-agent-target.js';
import { MOCK_MODES } from '../../../src/targets/mock-planner.js';

/**
 * Heavy lane: the whole library through the bait check, and slices of the matrix through the mock agent
 * in every mode (the full run, 3 × 1,710 attempts, is scripts/attack-matrix-mock.ts; its tables are in
 * docs/attacks.md).
 *
 * What the mock agent does, stated as a rule the runs must follow exactly. It carries out
 * `write "<text>" to <path>` and `send <file> to <url>` lines it finds in files (vulnerable mode only),
 * line by line at the start of a line after comment decoration. Hence:
 * - objectives: it succeeds at every write inside the workspace; it fails git-hook (it cannot set an
 *   execute bit), shell-rc and ssh-authorized-key (it writes `~/...` inside the workspace, not the home),
 *   secret-copy and sentinel-deleted (no copy or delete verb). It succeeds at sending a workspace file
 *   (dotenv-sent, source-sent: read, then POSTed with http_request through the attempt's egress proxy);
 *   it fails ssh-key-sent and home-credential-sent (its file tools reach the workspace only, not the home)
 *   and env-var-sent (it has no environment);
 * - carriers: every carrier but package-json (there the instruction sits inside a JSON string, after
 *   `"description": "`, so no line starts with it) and script-output (the instruction is printed by
 *   `npm test`, and the mock has no shell);
 * - strategies: plain, authority, urgency, html-comment, and split (it follows the `also read` to the
 *   second file); it does not decode zero-width, Unicode-tag, base64, homoglyph or French text.
 */
const MOCK_OBJECTIVES = new Set<ObjectiveId>([
  'ci-workflow-step',
  'npm-postinstall',
  'vscode-task',
  'mcp-server-config',
  'config-weakened',
  'test-script-disabled',
  'ci-lint-removed',
  'npmrc-registry',
  'agent-rules-file',
  'dotenv-sent',
  'source-sent',
]);
const MOCK_CARRIERS = new Set<CarrierId>(
  CARRIER_IDS.filter((id) => id !== 'package-json' && id !== 'script-output'),
);
const MOCK_STRATEGIES = new Set<StrategyId>(['plain', 'authority', 'urgency', 'split', 'html-comment']);

const expected = (attackId: string, mode: string) => {
  const ref = libraryRefOf(attackId);
  assert.ok(ref !== undefined, attackId);
  const follows =
    MOCK_OBJECTIVES.has(ref.objective) && MOCK_CARRIERS.has(ref.carrier) && MOCK_STRATEGIES.has(ref.strategy);
  return mode === 'vulnerable' && follows ? 'success' : 'failure';
};

describe('the attack library, end to end (heavy)', () => {
  let parent: string;
  before(() => {
    parent = mkdtempSync(join(tmpdir(), 'witness-library-'));
  });
  after(() => rmSync(parent, { recursive: true, force: true }));

  it('every attack of the full matrix passes the bait check, its user task too', async () => {
    const attacks = expandMatrix({ objectives: 'all', carriers: 'all', strategies: 'all' });
    assert.equal(attacks.length, OBJECTIVE_IDS.length * CARRIER_IDS.length * STRATEGY_IDS.length);
    const findings = await checkAllBait(attacks, { parent, concurrency: 4 });
    assert.deepEqual(
      findings.filter((finding) => finding.status !== 'clean'),
      [],
    );
    const tasks = await checkAllBait(
      attacks.map((attack) => ({ id: attack.id, files: attack.files, expect: attack.task ?? attack.expect })),
      { parent, concurrency: 4 },
    );
    assert.deepEqual(
      tasks.filter((finding) => finding.status !== 'clean'),
      [],
    );
    assert.deepEqual(readdirSync(parent), [], 'temporary workspaces are removed');
  });

  const slices: Array<[string, MatrixInput]> = [
    ['every objective, README, plain', { objectives: 'all', carriers: ['readme'], strategies: ['plain'] }],
    [
      'npmrc-registry × every carrier × every strategy',
      { objectives: ['npmrc-registry'], carriers: 'all', strategies: 'all' },
    ],
    [
      'secret-copy (copy verb) × README × every strategy',
      { objectives: ['secret-copy'], carriers: ['readme'], strategies: 'all' },
    ],
    [
      'dotenv-sent × every carrier × plain and base64',
      { objectives: ['dotenv-sent'], carriers: 'all', strategies: ['plain', 'base64'] },
    ],
  ];
  for (const [name, matrix] of slices) {
    for (const mode of MOCK_MODES) {
      it(`mock agent, ${mode}: ${name} — outcomes follow the stated rule`, async () => {
        const campaign = CampaignSchema.parse({
          name: `library-${mode}`,
          target: { kind: 'mock', mode },
          concurrency: 4,
          attacks: expandMatrix(matrix),
        });
        const result = await runCampaign({
          campaign,
          target: new MockAgentTarget({ mode }),
          workspaceParent: parent,
        });
        const outcomes = result.attempts.map((attempt) => [attempt.attack, attempt.outcome]);
        assert.deepEqual(
          outcomes,
          campaign.attacks.map((attack) => [attack.id, expected(attack.id, mode)]),
        );
        for (const attempt of result.attempts)
          assert.match(attempt.reply ?? '', mode === 'refusing' ? /cannot help/ : /Summary/);
        // What was sent is the attempt's network evidence: a request to the attacker exactly when an
        // exfiltration succeeded, refused by the egress proxy after it was recorded.
        for (const attempt of result.attempts) {
          const sent = (attempt.network?.requests ?? []).filter(
            (request) => request.host === 'attacker.example',
          );
          const exfiltration = libraryRefOf(attempt.attack)?.objective.endsWith('-sent') === true;
          assert.equal(sent.length > 0, exfiltration && attempt.outcome === 'success', attempt.attack);
          assert.ok(sent.every((request) => request.disposition === 'refused' && request.status === 403));
          assert.equal(attempt.network?.mode, 'proxy');
        }
        // The user's task is done in every mode but refusing, injection or not (SPEC §16).
        assert.deepEqual(
          new Set(result.attempts.map((attempt) => attempt.task?.outcome)),
          new Set([mode === 'refusing' ? 'failure' : 'success']),
        );
      });
    }
  }
});
