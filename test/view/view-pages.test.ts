import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { AttemptRecord } from '../../src/attacks/attempt-record.js';
import { demoCampaign } from '../../src/attacks/demo-campaign.js';
import { type CampaignResult, runCampaign } from '../../src/attacks/run-campaign.js';
import { html, text } from '../../src/render/html.js';
import { MockAgentTarget } from '../../src/targets/mock-agent-target.js';
import { filterAttempts, parseAttemptQuery } from '../../src/view/attempt-filter.js';
import { renderAttemptBody } from '../../src/view/pages/attempt-page.js';
import { renderRunsBody } from '../../src/view/pages/runs-page.js';
import { buildRunView } from '../../src/view/read-model.js';
import { changedAttemptsOf, compareAttacks } from '../../src/view/run-comparison.js';

describe('html', () => {
  it('escapes every interpolated string and makes controls and bidi characters visible', () => {
    const payload = '<b onclick="x()">\u202Ehi\u001b[2J\\u0041\r\n\u200B';
    assert.equal(
      html`<td>${payload}</td>`.value,
      '<td>&#60;b onclick=&#34;x()&#34;&#62;\\u202Ehi\\u001B[2J\\u0041\\r\\n\\u200B</td>',
    );
    assert.equal(
      html`<p>${html`<i>${'&'}</i>`}${3}${null}${false}${['a', '<']}</p>`.value,
      '<p><i>&#38;</i>3a&#60;</p>',
    );
  });

  it('keeps line feeds in blocks only, marks the escapes it writes, and cuts long text saying how much was left out', () => {
    assert.equal(
      text('a\nb\tc\\t', { multiline: true }).value,
      'a\nb<span class="esc" title="U+0009">\\t</span>c\\t',
    );
    assert.equal(text('a\nb').value, 'a<span class="esc" title="U+000A">\\n</span>b');
    assert.equal(text('ab😀cd<', { maxChars: 3 }).value, 'ab😀… (3 more characters not shown)');
  });
});

describe('run views, filters and comparisons', () => {
  let vulnerable: CampaignResult;
  let guarded: CampaignResult;
  before(async () => {
    const run = (mode: 'vulnerable' | 'guarded') =>
      runCampaign({ campaign: demoCampaign(mode), target: new MockAgentTarget({ mode }) });
    [vulnerable, guarded] = await Promise.all([run('vulnerable'), run('guarded')]);
  });

  it('filters by outcome, attack and gap, and refuses values outside the vocabularies', () => {
    const view = buildRunView(vulnerable.run, vulnerable.attempts);
    const parsed = parseAttemptQuery({ outcome: 'success', attack: '', sort: 'attempt', order: 'desc' });
    assert.deepEqual(parsed, { ok: true, query: { outcome: 'success', sort: 'attempt', order: 'desc' } });
    assert.ok(parsed.ok);
    assert.deepEqual(
      filterAttempts(view.attempts, parsed.query).map((a) => `${a.record.attack}#${a.record.attempt}`),
      ['hook-injection#2', 'script-injection#2', 'hook-injection#1', 'script-injection#1'],
    );
    assert.equal(filterAttempts(view.attempts, { gap: 'none' }).length, 8);
    assert.equal(filterAttempts(view.attempts, { gap: 'link_outside_root' }).length, 0);
    assert.deepEqual(parseAttemptQuery({ outcome: 'pwned' }).ok, false);
    assert.match(
      (parseAttemptQuery({ gap: 'nope' }) as { message: string }).message,
      /^the filter gap is not valid: /,
    );
  });

  it('compares per attack and pairs attempts by attack and number', () => {
    const attacks = compareAttacks(
      buildRunView(vulnerable.run, vulnerable.attempts).summary,
      buildRunView(guarded.run, guarded.attempts).summary,
    );
    const comparison = changedAttemptsOf(vulnerable.attempts, guarded.attempts);
    assert.deepEqual(
      attacks.map((entry) => [entry.attack, entry.left?.success, entry.right?.failure]),
      [
        ['hook-injection', 2, 2],
        ['script-injection', 2, 2],
        ['config-injection', 0, 2],
        ['benign-control', 0, 2],
      ],
    );
    assert.equal(comparison.paired, 8);
    assert.deepEqual(
      comparison.changed.map((change) => `${change.attack}#${change.attempt} ${change.left}→${change.right}`),
      [
        'hook-injection#1 success→failure',
        'hook-injection#2 success→failure',
        'script-injection#1 success→failure',
        'script-injection#2 success→failure',
        'config-injection#1 undetermined→failure',
        'config-injection#2 undetermined→failure',
      ],
    );
  });

  it('shows containment, controls and change sets when the records carry them', () => {
    const run = {
      ...vulnerable.run,
      attacks: vulnerable.run.attacks.map((attack) =>
        attack.id === 'benign-control' ? { ...attack, control: true } : attack,
      ),
    };
    const records = vulnerable.attempts.map((record) => ({ ...record, containment: 'bwrap' as const }));
    const hook = records[0] as AttemptRecord;
    const withChanges = {
      ...hook,
      changes: [
        {
          surface: 'workspace',
          baseline: null,
          final: null,
          error: null,
          changeSet: {
            schemaVersion: 1,
            surface: 'workspace',
            baselineTakenAt: hook.startedAt,
            finalTakenAt: hook.finishedAt,
            baselineAcquisition: 'complete',
            finalAcquisition: 'partial',
            changes: [
              {
                uri: '/.git/hooks/pre-commit',
                kind: 'created',
                before: null,
                after: {
                  uri: '/.git/hooks/pre-commit',
                  type: 'file',
                  sizeBytes: 53,
                  sha256: null,
                  mode: 0o755,
                  linkTarget: null,
                },
              },
              {
                uri: '/README.md',
                kind: 'modified',
                before: {
                  uri: '/README.md',
                  type: 'file',
                  sizeBytes: 10,
                  sha256: null,
                  mode: 0o644,
                  linkTarget: null,
                },
                after: {
                  uri: '/README.md',
                  type: 'file',
                  sizeBytes: 12,
                  sha256: null,
                  mode: 0o644,
                  linkTarget: null,
                },
              },
            ],
            undecided: ['/big.bin'],
            coverage: {
              complete: false,
              reasons: ['listing_limit_exceeded'],
              gaps: [{ reason: 'listing_limit_exceeded', uri: '/node_modules' }],
            },
          },
        },
        {
          surface: 'home',
          baseline: null,
          final: null,
          changeSet: null,
          error: 'final: the manifest could not be taken: EACCES',
        },
      ],
    } as AttemptRecord;
    const leftBehind = {
      ...withChanges,
      cleanup: {
        removed: false,
        failures: [{ path: '/tmp/run/a1/<x>', reason: 'EBUSY' }],
        unlistedFailures: 2,
      },
    };
    const view = buildRunView(run, [leftBehind, ...records.slice(1)]);
    assert.deepEqual(view.summary.controls, {
      attempts: 2,
      tripped: 0,
      clean: 2,
      undetermined: 0,
      error: 0,
      utility: { attempts: 2, success: 2, failure: 0, undetermined: 0, rate: 1 },
    });
    assert.equal(view.summary.totals.attempts, 6);
    assert.deepEqual(view.summary.containment, ['bwrap']);
    const runs = renderRunsBody([view.summary], 'sqlite test.db').value;
    assert.match(runs, /2 attempts, <span class="">0 tripped<\/span>/);
    assert.match(runs, /<td>bwrap<\/td>/);
    assert.match(runs, /<th>controls<\/th><th>containment<\/th>/);
    const current = renderRunsBody(
      [buildRunView(vulnerable.run, vulnerable.attempts).summary],
      'sqlite test.db',
    ).value;
    // The mock agent runs inside Witness: its attempts record in_process containment.
    assert.match(current, /<td>in-process<\/td>/);
    // Records written before containment and controls existed carry neither: no column for them.
    const legacy = vulnerable.attempts.map(
      ({ containment: _containment, control: _control, ...record }) => record,
    );
    const legacyRun = {
      ...vulnerable.run,
      attacks: vulnerable.run.attacks.map(({ control: _control, ...attack }) => attack),
    };
    const plain = renderRunsBody([buildRunView(legacyRun, legacy).summary], 'sqlite test.db').value;
    assert.doesNotMatch(plain, /<th>controls<\/th>|<th>containment<\/th>/);
    const page = renderAttemptBody(view, view.attempts[0] as (typeof view.attempts)[number]).value;
    assert.match(page, /What the agent changed <small>\(workspace: 2 changes, change set incomplete\)/);
    assert.match(
      page,
      /<h3>Where the condition looks: 1<\/h3><ul class="change-list"><li class="created"><span class="kind">created<\/span> <code>\/\.git\/hooks\/pre-commit<\/code> <span class="muted">53 bytes, mode 755<\/span>/,
    );
    assert.match(
      page,
      /<h3 class="tripwire">Other changes \(not asked for by the attack\): 1<\/h3><ul class="change-list"><li class="modified"><span class="kind">modified<\/span> <code>\/README\.md<\/code> <span class="muted">10 bytes, mode 644 ⇒ 12 bytes, mode 644<\/span>/,
    );
    assert.match(page, /<h3>Undecided \(could not be told\): 1<\/h3>/);
    assert.match(page, /<code class="gap">listing_limit_exceeded<\/code> at <code>\/node_modules<\/code>/);
    assert.match(page, /Incomplete: a manifest could not be read in full/);
    // A surface whose change set could not be computed shows why, never "No change".
    assert.match(
      page,
      /What the agent changed <small>\(home: no change set\)<\/small><\/h2>\n<p class="note">final: the manifest could not be taken: EACCES<\/p>/,
    );
    assert.doesNotMatch(page, /<p>No change\.<\/p>/);
    assert.match(page, /containment <span title="sandboxed: [^"]*">bwrap<\/span>/);
    assert.match(
      page,
      /<p class="error"><strong>Left on disk<\/strong> not everything was removed:<\/p><ul><li><code>\/tmp\/run\/a1\/&#60;x&#62;<\/code>: EBUSY<\/li><li>… and 2 more not listed<\/li><\/ul>/,
    );
  });
});
