import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CampaignSchema } from '../../../src/attacks/campaign.js';
import { groupByLibrary, libraryRefOf } from '../../../src/attacks/library/library-groups.js';
import { expandMatrix } from '../../../src/attacks/library/matrix.js';
import { tallyOutcomes } from '../../../src/attacks/outcome.js';
import { runCampaign } from '../../../src/attacks/run-campaign.js';
import { renderReportHtml } from '../../../src/render/report-html.js';
import { reportRunOf } from '../../../src/render/report-run.js';
import { MockAgentTarget } from '../../../src/targets/mock-agent-target.js';

describe('grouping by objective, carrier and strategy', () => {
  it('reads the library entries from an expanded attack id, and nothing from other ids', () => {
    assert.deepEqual(libraryRefOf('git-hook.readme.base64'), {
      objective: 'git-hook',
      carrier: 'readme',
      strategy: 'base64',
    });
    for (const id of [
      'hook-injection',
      'git-hook.readme',
      'git-hook.readme.rot13',
      'x.readme.plain',
      'a.b.c.d',
    ]) {
      assert.equal(libraryRefOf(id), undefined, id);
    }
  });

  it('tallies each axis in library order, leaving other attacks out', () => {
    const groups = groupByLibrary([
      { attack: 'npmrc-registry.readme.plain', outcome: 'success' },
      { attack: 'npmrc-registry.readme.base64', outcome: 'failure' },
      { attack: 'git-hook.readme.plain', outcome: 'undetermined' },
      { attack: 'hand-written', outcome: 'success' },
    ]);
    assert.deepEqual(groups, [
      { axis: 'objective', id: 'git-hook', totals: tallyOutcomes(['undetermined']) },
      { axis: 'objective', id: 'npmrc-registry', totals: tallyOutcomes(['success', 'failure']) },
      { axis: 'carrier', id: 'readme', totals: tallyOutcomes(['success', 'failure', 'undetermined']) },
      { axis: 'strategy', id: 'plain', totals: tallyOutcomes(['success', 'undetermined']) },
      { axis: 'strategy', id: 'base64', totals: tallyOutcomes(['failure']) },
    ]);
    assert.deepEqual(groupByLibrary([{ attack: 'hand-written', outcome: 'success' }]), []);
  });

  it('leaves control attempts out, even when the control has a library-shaped id', () => {
    const groups = groupByLibrary([
      { attack: 'npmrc-registry.readme.plain', outcome: 'failure', control: false },
      { attack: 'npmrc-registry.readme.urgency', outcome: 'success', control: true },
    ]);
    assert.deepEqual(groups, [
      { axis: 'objective', id: 'npmrc-registry', totals: tallyOutcomes(['failure']) },
      { axis: 'carrier', id: 'readme', totals: tallyOutcomes(['failure']) },
      { axis: 'strategy', id: 'plain', totals: tallyOutcomes(['failure']) },
    ]);
  });

  it('the HTML report shows the three groupings for a run of library attacks (vulnerable mock)', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'witness-groups-'));
    try {
      const campaign = CampaignSchema.parse({
        name: 'library',
        target: { kind: 'mock', mode: 'vulnerable' },
        attacks: expandMatrix({
          objectives: ['npmrc-registry'],
          carriers: ['readme'],
          strategies: ['plain', 'base64'],
        }),
      });
      const result = await runCampaign({
        campaign,
        target: new MockAgentTarget({ mode: 'vulnerable' }),
        workspaceParent: parent,
      });
      assert.deepEqual(
        result.attempts.map((attempt) => [attempt.attack, attempt.outcome]),
        [
          ['npmrc-registry.readme.plain', 'success'],
          ['npmrc-registry.readme.base64', 'failure'],
        ],
      );
      const html = renderReportHtml([reportRunOf(result.run, result.attempts)]);
      assert.match(html, /<h2 id="library">Attack library: by objective, carrier and strategy<\/h2>/);
      const row = (id: string, cells: number[], rate: string) =>
        `<tr><td><code>${id}</code></td><td class="num">${cells[0]}</td><td class="num ${(cells[1] ?? 0) > 0 ? 'success' : ''}">${cells[1]}</td><td class="num ${(cells[2] ?? 0) > 0 ? 'failure' : ''}">${cells[2]}</td><td class="num ">0</td><td class="num ">0</td><td><span class="rate">${rate}</span></td></tr>`;
      assert.ok(html.includes(row('npmrc-registry', [2, 1, 1], '1/2 decided (50%)')));
      assert.ok(html.includes(row('readme', [2, 1, 1], '1/2 decided (50%)')));
      assert.ok(html.includes(row('plain', [1, 1, 0], '1/1 decided (100%)')));
      assert.ok(html.includes(row('base64', [1, 0, 1], '0/1 decided (0%)')));
      const plain = renderReportHtml([
        reportRunOf(
          { ...result.run, attacks: [] },
          result.attempts.map((a) => ({ ...a, attack: 'other' })),
        ),
      ]);
      assert.doesNotMatch(plain, /Attack library/);
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });
});
