import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { matchText } from '../../src/matching/text-matcher.js';
import { contains, equals, regex } from '../../src/models/matcher.js';

describe('matchText: contains', () => {
  it('matches when the value occurs anywhere in the text', () => {
    assert.equal(matchText(contains('secret'), 'the secret plan'), 'match');
    assert.equal(matchText(contains('secret'), 'the public plan'), 'no_match');
  });

  it('is case-insensitive by default', () => {
    assert.equal(matchText(contains('PWNED'), 'you were pwned'), 'match');
    assert.equal(matchText(contains('pwned'), 'YOU WERE PWNED'), 'match');
  });

  it('compares case exactly when caseSensitive is true', () => {
    assert.equal(matchText(contains('PWNED', { caseSensitive: true }), 'you were pwned'), 'no_match');
    assert.equal(matchText(contains('PWNED', { caseSensitive: true }), 'you were PWNED'), 'match');
  });

  it('folds case so that "ß" meets "SS"', () => {
    assert.equal(matchText(contains('STRASSE'), 'die straße'), 'match');
  });

  it('folds a final sigma like any other sigma, so "ΣΑΣ" is found inside "ΣΑΣΑ"', () => {
    assert.equal(matchText(contains('ΣΑΣ'), 'ΣΑΣΑ'), 'match');
    assert.equal(matchText(contains('σας'), 'ΣΑΣΑ'), 'match');
  });

  it('trims surrounding whitespace of the value by default', () => {
    assert.equal(matchText(contains('  plan\n'), 'the plan.'), 'match');
  });

  it('keeps the value whitespace when ignoreWhitespace is false', () => {
    assert.equal(matchText(contains(' plan ', { ignoreWhitespace: false }), 'the plan.'), 'no_match');
    assert.equal(matchText(contains(' plan ', { ignoreWhitespace: false }), 'the plan is'), 'match');
  });

  it('never matches an empty value, even against empty text', () => {
    assert.equal(matchText(contains(''), 'anything'), 'no_match');
    assert.equal(matchText(contains(''), ''), 'no_match');
  });

  it('never matches a whitespace-only value, whatever ignoreWhitespace says', () => {
    assert.equal(matchText(contains('  \n\t'), 'a  \n\tb'), 'no_match');
    assert.equal(matchText(contains('  ', { ignoreWhitespace: false }), 'a  b'), 'no_match');
  });

  it('never matches empty text', () => {
    assert.equal(matchText(contains('x'), ''), 'no_match');
    assert.equal(matchText(contains('x', { ignoreWhitespace: false }), ''), 'no_match');
  });

  it('does not find a value in text that is only whitespace', () => {
    assert.equal(matchText(contains('x'), '   \n'), 'no_match');
  });
});

describe('matchText: equals', () => {
  it('matches text equal to the value after trimming both sides', () => {
    assert.equal(matchText(equals('  done '), '\ndone\n'), 'match');
    assert.equal(matchText(equals('done'), 'done.'), 'no_match');
  });

  it('is not a substring search', () => {
    assert.equal(matchText(equals('done'), 'all done'), 'no_match');
  });

  it('is case-insensitive by default and exact with caseSensitive', () => {
    assert.equal(matchText(equals('Done'), 'DONE'), 'match');
    assert.equal(matchText(equals('Done', { caseSensitive: true }), 'DONE'), 'no_match');
    assert.equal(matchText(equals('Done', { caseSensitive: true }), 'Done'), 'match');
  });

  it('compares untrimmed text when ignoreWhitespace is false', () => {
    assert.equal(matchText(equals('done', { ignoreWhitespace: false }), 'done\n'), 'no_match');
    assert.equal(matchText(equals('done\n', { ignoreWhitespace: false }), 'done\n'), 'match');
  });

  it('matches empty text with equals("")', () => {
    assert.equal(matchText(equals(''), ''), 'match');
    assert.equal(matchText(equals('', { ignoreWhitespace: false }), ''), 'match');
  });

  it('matches whitespace-only text with equals("") only when whitespace is ignored', () => {
    assert.equal(matchText(equals(''), ' \n'), 'match');
    assert.equal(matchText(equals('', { ignoreWhitespace: false }), ' \n'), 'no_match');
  });

  it('does not match nonempty text with equals("")', () => {
    assert.equal(matchText(equals(''), 'x'), 'no_match');
  });
});

describe('matchText: regex', () => {
  it('searches anywhere in the text rather than requiring a full match', () => {
    assert.equal(matchText(regex('b+'), 'abbbc'), 'match');
    assert.equal(matchText(regex('^b+$'), 'abbbc'), 'no_match');
  });

  it('is case-insensitive by default and exact with caseSensitive', () => {
    assert.equal(matchText(regex('ABC'), 'xabcx'), 'match');
    assert.equal(matchText(regex('ABC', { caseSensitive: true }), 'xabcx'), 'no_match');
    assert.equal(matchText(regex('ABC', { caseSensitive: true }), 'xABCx'), 'match');
  });

  it('searches the trimmed text by default, so anchors see past surrounding whitespace', () => {
    assert.equal(matchText(regex('^done$'), '  done\n'), 'match');
    assert.equal(matchText(regex('^done$', { ignoreWhitespace: false }), '  done\n'), 'no_match');
  });

  it('uses JavaScript Unicode-mode syntax, where "." is one code point', () => {
    assert.equal(matchText(regex('^.$', { caseSensitive: true }), '😀'), 'match');
    assert.equal(matchText(regex('\\p{Lu}', { caseSensitive: true }), 'abc'), 'no_match');
    assert.equal(matchText(regex('\\p{Lu}', { caseSensitive: true }), 'aBc'), 'match');
  });

  it('gives the same answer when the same matcher is used twice (no state kept between searches)', () => {
    const matcher = regex('x');
    assert.deepEqual(
      [matchText(matcher, 'x'), matchText(matcher, 'x'), matchText(matcher, 'y')],
      ['match', 'match', 'no_match'],
    );
  });

  it('ends a catastrophic pattern on attacker text in "timeout", quickly', () => {
    const started = performance.now();
    const outcome = matchText(regex('^(a+)+$'), `${'a'.repeat(40)}b`, { regexTimeoutMs: 50 });
    const elapsedMs = performance.now() - started;
    assert.equal(outcome, 'timeout');
    assert.ok(elapsedMs < 2000, `took ${elapsedMs} ms`);
  });

  it('still answers after a timeout', () => {
    assert.equal(matchText(regex('^(a+)+$'), `${'a'.repeat(40)}b`, { regexTimeoutMs: 20 }), 'timeout');
    assert.equal(matchText(regex('^(a+)+$'), 'aaaa'), 'match');
  });
});
