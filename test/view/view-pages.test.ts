import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { AttemptRecord } from '../../src/attacks/attempt-record.js';
import { demoCampaign } from '../../src/attacks/demo-campaign.js';
import { MemoryAttemptRecorder } from '../../src/attacks/memory-recorder.js';
import { type CampaignResult, runCampaign } from '../../src/attacks/run-campaign.js';
import type { Memory } from '../../src/memory/memory.js';
import { openMemory } from '../../src/memory/open-memory.js';
import { html, text } from '../../src/render/html.js';
import { countAttempts, type RunSummary, summarizeRun } from '../../src/render/run-summary.js';
import { MockAgentTarget } from '../../src/targets/mock-agent-target.js';
import { parseAttemptQuery } from '../../src/view/attempt-filter.js';
import { renderAttemptBody } from '../../src/view/pages/attempt-page.js';
import { renderRunBody } from '../../src/view/pages/run-page.js';
import { renderRunsBody } from '../../src/view/pages/runs-page.js';
import { ATTEMPTS_PER_PAGE, ViewReadModel } from '../../src/view/read-model.js';
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

/** The read model over a memory this process holds (the viewer's reader, without the file). */
export function readModelOf(memory: Memory): ViewReadModel {
  return new ViewReadModel({
    location: memory.location,
    read: (work) => work(memory),
    close: async () => {},
  });
}

describe('run views, filters and comparisons', () => {
  let vulnerable: CampaignResult;
  let guarded: CampaignResult;
  let memory: Memory;
  let model: ViewReadModel;
  before(async () => {
    memory = await openMemory(':memory:');
    model = readModelOf(memory);
    const recorder = new MemoryAttemptRecorder(memory);
    const run = (mode: 'vulnerable' | 'guarded') =>
      runCampaign({ campaign: demoCampaign(mode), target: new MockAgentTarget({ mode }), recorder });
    vulnerable = await run('vulnerable');
    guarded = await run('guarded');
  });
  after(async () => {
    await memory?.close();
  });

  it('filters by outcome, attack and gap, and refuses values outside the vocabularies', async () => {
    const parsed = parseAttemptQuery({ outcome: 'success', attack: '', sort: 'attempt', order: 'desc' });
    assert.deepEqual(parsed, { ok: true, query: { outcome: 'success', sort: 'attempt', order: 'desc' } });
    assert.ok(parsed.ok);
    const page = await model.pageAttempts(vulnerable.run, parsed.query);
    // Descending: ties of the attempt number in the run's order reversed.
    assert.deepEqual(
      page.rows.map((row) => `${row.attack}#${row.attempt}`),
      ['script-injection#2', 'hook-injection#2', 'script-injection#1', 'hook-injection#1'],
    );
    assert.equal(page.matching, 4);
    assert.equal((await model.pageAttempts(vulnerable.run, { gap: 'none' })).matching, 8);
    assert.equal((await model.pageAttempts(vulnerable.run, { gap: 'link_outside_root' })).matching, 0);
    assert.equal((await model.pageAttempts(vulnerable.run, { attack: 'hook-injection' })).matching, 2);
    const replies = await model.pageAttempts(vulnerable.run, { q: 'summary' });
    assert.ok(replies.rows.every((row) => row.reply?.toLowerCase().includes('summary')));
    assert.deepEqual(parseAttemptQuery({ outcome: 'pwned' }).ok, false);
    assert.match(
      (parseAttemptQuery({ gap: 'nope' }) as { message: string }).message,
      /^the filter gap is not valid: /,
    );
  });

  it('shows a page of attempts at a time, filtered by the memory, with a link to the next page', async () => {
    // The vulnerable run's attempts stored 16 times under new numbers: 128 attempts, two pages.
    const large = { ...vulnerable.run, runId: `${vulnerable.run.runId}-large` };
    const recorder = new MemoryAttemptRecorder(memory);
    await recorder.startRun(large);
    for (let copy = 0; copy < 16; copy++) {
      for (const record of vulnerable.attempts) {
        await recorder.recordAttempt(
          { ...record, runId: large.runId, attempt: record.attempt + copy * 2 },
          large,
        );
      }
    }
    const summary = (await model.getRun(large.runId)) as RunSummary;
    const first = await model.pageAttempts(large, {});
    assert.equal(first.rows.length, ATTEMPTS_PER_PAGE);
    assert.equal(first.matching, 128);
    assert.ok(first.next !== null);
    const body = renderRunBody(summary, first, {}).value;
    assert.match(body, /128 of 128 attempts match; the first 100 shown/);
    assert.match(body, new RegExp(`href="/runs/[^"]+\\?after=${first.next}#attempts" rel="next"`));
    const second = await model.pageAttempts(large, { after: first.next });
    assert.equal(second.rows.length, 28);
    assert.equal(second.next, null);
    const keys = [...first.rows, ...second.rows].map((row) => `${row.attack}#${row.attempt}`);
    assert.equal(new Set(keys).size, 128);
    assert.match(
      renderRunBody(summary, second, { after: first.next }).value,
      /rel="first">← first page<\/a> <span class="muted">last page<\/span>/,
    );
    // In the run's order: every attempt of the first attack, then the next.
    assert.deepEqual(
      first.rows.slice(0, 3).map((row) => `${row.attack}#${row.attempt}`),
      ['hook-injection#1', 'hook-injection#2', 'hook-injection#3'],
    );
    const successes = await model.pageAttempts(large, {
      outcome: 'success',
      sort: 'finished',
      order: 'desc',
    });
    assert.equal(successes.matching, 64);
    assert.ok(successes.rows.every((row) => row.outcome === 'success'));
    await assert.rejects(
      model.pageAttempts(large, { after: 'not-a-cursor' }),
      /the page cursor is not one this viewer gave/,
    );
  });

  it('compares per attack and pairs attempts by attack and number', async () => {
    const attacks = compareAttacks(
      (await model.getRun(vulnerable.run.runId)) as RunSummary,
      (await model.getRun(guarded.run.runId)) as RunSummary,
    );
    const comparison = changedAttemptsOf(vulnerable.attempts, guarded.attempts);
    // The memory pairs them as the records in hand do.
    assert.deepEqual(await model.pairAttempts(vulnerable.run.runId, guarded.run.runId, 200), comparison);
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

  it('shows containment, controls and change sets when the records carry them', async () => {
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
    const summary = summarizeRun(run, countAttempts([leftBehind, ...records.slice(1)]));
    assert.deepEqual(summary.controls, {
      attempts: 2,
      tripped: 0,
      clean: 2,
      undetermined: 0,
      error: 0,
      utility: { attempts: 2, success: 2, failure: 0, undetermined: 0, rate: 1 },
    });
    assert.equal(summary.totals.attempts, 6);
    assert.deepEqual(summary.containment, ['bwrap']);
    const runs = renderRunsBody([summary], 'sqlite test.db').value;
    assert.match(runs, /2 attempts, <span class="">0 tripped<\/span>/);
    assert.match(runs, /<td>bwrap<\/td>/);
    assert.match(runs, /<th>controls<\/th><th>containment<\/th>/);
    const current = renderRunsBody(
      [(await model.getRun(vulnerable.run.runId)) as RunSummary],
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
    const plain = renderRunsBody([summarizeRun(legacyRun, countAttempts(legacy))], 'sqlite test.db').value;
    assert.doesNotMatch(plain, /<th>controls<\/th>|<th>containment<\/th>/);
    const page = renderAttemptBody({ run, record: leftBehind, control: false }).value;
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
