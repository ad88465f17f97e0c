import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { neutralizeParts, neutralizeText, quoteText } from '../../src/text/quote-text.js';
import { firstUnsafe, HOSTILE } from '../support/hostile-text.js';

describe('neutralizeText', () => {
  it('escapes every control class visibly: C0, ESC sequences, DEL, C1, bidi, zero-width, separators', () => {
    const out = neutralizeText(HOSTILE);
    assert.equal(firstUnsafe(out), undefined);
    assert.equal(
      out,
      'x\\u001B]0;pwned\\u0007\\u001B[2J\\u009B31m\\u009D0;t\\u009C\\u007F\\u0008\\u000B\\u000C\\u202Egpj.sh\\u202D\\u2066\\u2069\\u200E\\u200F\\u061C\\u200B\\uFEFF\\u2028\\u2029\\rVerdict: FALSE\\ny',
    );
  });

  it('keeps line feeds only when asked, and still escapes a carriage return', () => {
    assert.equal(neutralizeText('a\r\nb', { multiline: true }), 'a\\r\nb');
    assert.equal(neutralizeText('a\nb'), 'a\\nb');
  });

  it('writes backslashes and quotes as they are, so criteria and scripts read as written', () => {
    assert.equal(neutralizeText('curl\\s.*attacker\\.example'), 'curl\\s.*attacker\\.example');
    assert.equal(neutralizeText('"upload":\\s*"x"'), '"upload":\\s*"x"');
  });

  it('tells a typed escape from a written one in its parts, and leaves neutralized text as it is', () => {
    assert.deepEqual(neutralizeParts('\\u001B \u001B'), [
      { text: '\\u001B ' },
      { escape: '\\u001B', codePoint: 0x1b },
    ]);
    const once = neutralizeText(HOSTILE);
    assert.equal(neutralizeText(once), once);
  });

  it('escapes lone surrogates and astral format characters, keeps ordinary text and emoji', () => {
    assert.equal(neutralizeText('\uD800é😀\u{E0001}'), '\\uD800é😀\\u{E0001}');
  });

  it('cuts at whole code points and can count what was left out', () => {
    assert.equal(neutralizeText('😀😀😀', { maxChars: 2 }), '😀😀…');
    assert.equal(
      neutralizeText('abcdef', { maxChars: 2, countOmitted: true }),
      'ab… (4 more characters not shown)',
    );
  });

  it('quoteText puts one line between the first quote mark the text does not hold', () => {
    assert.equal(quoteText('curl\\s\n'), '"curl\\s\\n"');
    assert.equal(quoteText('say "hi"'), `'say "hi"'`);
    assert.equal(quoteText(`"it's"`), '`"it\'s"`');
    assert.equal(quoteText(`"it's" \``), `""it's" \`"`);
    assert.equal(quoteText('A'.repeat(100), 5), '"AAAAA…"');
  });
});
