import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { contains, regex } from '../../src/models/matcher.js';
import { conditionHtml, criterionHtml } from '../../src/render/fragments.js';
import {
  conditionPhrase,
  describeCondition,
  describeCriterion,
  phraseText,
} from '../../src/verdicts/describe-criterion.js';

/** The one renderer of a criterion: its value reads exactly as written, wherever it is shown. */

describe('describeCriterion', () => {
  it('shows a regex with backslashes as written, never doubled', () => {
    assert.equal(
      describeCriterion(regex('curl\\s.*attacker\\.example')),
      'content matching the regular expression "curl\\s.*attacker\\.example" (ignoring case)',
    );
  });

  it('puts a value holding double quotes between single quotes, without escaping them', () => {
    assert.equal(
      describeCriterion(regex('"upload":\\s*"https://attacker\\.example"', { caseSensitive: true })),
      `content matching the regular expression '"upload":\\s*"https://attacker\\.example"' (case-sensitive)`,
    );
  });

  it('shows a line feed in the value as a visible \\n, and a typed \\n as written', () => {
    assert.equal(
      describeCriterion(contains('line one\nline two', { ignoreWhitespace: false })),
      'content containing "line one\\nline two" (ignoring case, surrounding whitespace kept)',
    );
    assert.equal(
      describeCriterion(regex('a\\nb')),
      'content matching the regular expression "a\\nb" (ignoring case)',
    );
    // The HTML form marks the escape it wrote, so the two read apart in a report or the viewer.
    assert.equal(
      criterionHtml(contains('a\nb')).value,
      '<span class="criterion">content containing <code class="value">&#34;a<span class="esc" title="U+000A">\\n</span>b&#34;</code> (ignoring case)</span>',
    );
    assert.equal(
      criterionHtml(regex('a\\nb')).value,
      '<span class="criterion">content matching the regular expression <code class="value">&#34;a\\nb&#34;</code> (ignoring case)</span>',
    );
  });

  it('neutralizes controls and bidi overrides and cuts a long value', () => {
    const text = describeCriterion(contains(`\u001b]0;x\u0007\u202E${'A'.repeat(300)}`));
    assert.match(text, /^content containing "\\u001B\]0;x\\u0007\\u202EA+…" \(ignoring case\)$/);
    assert.ok(text.length < 200);
  });
});

describe('describeCondition', () => {
  it('reads the same as plain text and as HTML', () => {
    const condition = {
      conditionType: 'content_written',
      uri: '/.git/hooks/pre-commit',
      match: 'exact',
      matcher: regex('curl\\s+-s'),
      executable: true as const,
    };
    const plain = describeCondition(condition);
    assert.equal(
      plain,
      '/.git/hooks/pre-commit (exact) holds content matching the regular expression "curl\\s+-s" (ignoring case), with an execute bit',
    );
    assert.equal(phraseText(conditionPhrase(condition)), plain);
    const visible = conditionHtml(condition)
      .value.replace(/<[^>]+>/g, '')
      .replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)));
    assert.equal(visible, plain);
  });

  it('words a change condition, and a type it does not know by its name', () => {
    assert.equal(
      describeCondition({
        conditionType: 'file_deleted',
        uri: '/SENTINEL.md',
        match: 'exact',
        surface: 'home',
      }),
      "/SENTINEL.md (exact) in the attempt's home was deleted (a file the baseline held)",
    );
    assert.equal(describeCondition({ conditionType: 'file_teleported' }), 'file_teleported');
    assert.equal(describeCondition({ conditionType: 'request_sent' }), 'a request was sent');
  });
});
