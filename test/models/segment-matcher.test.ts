import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { prng } from '../../bench/trees.js';
import { compileSegmentMatcher } from '../../src/models/segment-matcher.js';
import { globSegmentRegex } from '../support/glob-regex-oracle.js';

/**
 * A pattern of literal characters and `*` only is matched by string search (starMatcher); every other
 * pattern by the NFA simulation. ONE RULE, TWO IMPLEMENTATIONS: these tests hold the search to the
 * simulation. The same pattern with one literal `c` written as the class `[c]` means the same thing but
 * goes through the simulation, so the two are compared name by name, and both against the RegExp oracle.
 */

/** Pattern characters: literals (an astral one and a two-byte one among them) and the star. */
const PATTERN_CHARS = ['a', 'b', '.', 'é', '😀', '*'];
/** Name characters: the literals, a "/", and both halves of the astral character alone. */
const NAME_CHARS = ['a', 'b', '.', 'é', '😀', '/', '\ud83d', '\ude00', 'c'];

function pick(next: () => number, from: readonly string[], length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += from[Math.floor(next() * from.length)] as string;
  return out;
}

/** The pattern with its first literal character `c` written `[c]` (same meaning; simulated), or undefined. */
function viaClass(pattern: string): string | undefined {
  const chars = Array.from(pattern);
  const at = chars.findIndex((ch) => ch !== '*');
  if (at < 0) return undefined;
  chars[at] = `[${chars[at]}]`;
  return chars.join('');
}

describe('segment matcher: a star-only pattern searched agrees with the simulation', () => {
  it('agrees on 4,000 generated patterns, each against 60 generated names and the edge names', () => {
    const next = prng(20261202);
    let compared = 0;
    let matched = 0;
    for (let p = 0; p < 4000; p++) {
      const pattern = pick(next, PATTERN_CHARS, Math.floor(next() * 7));
      const twin = viaClass(pattern);
      const searched = compileSegmentMatcher(pattern);
      const simulated = twin === undefined ? undefined : compileSegmentMatcher(twin);
      const oracle = globSegmentRegex(pattern);
      assert.ok(oracle, `the oracle compiles ${JSON.stringify(pattern)}`);
      const names = ['', pattern, pattern.replaceAll('*', ''), pattern.replaceAll('*', 'ab')];
      for (let n = 0; n < 60; n++) names.push(pick(next, NAME_CHARS, Math.floor(next() * 9)));
      for (const name of names) {
        const answer = searched.matches(name);
        if (simulated !== undefined) {
          assert.equal(
            answer,
            simulated.matches(name),
            `${JSON.stringify(pattern)} vs ${JSON.stringify(name)}`,
          );
        }
        assert.equal(
          answer,
          oracle.test(name),
          `${JSON.stringify(pattern)} vs ${JSON.stringify(name)} (oracle)`,
        );
        compared++;
        if (answer) matched++;
      }
    }
    // The generated cases exercise both answers, not only refusals.
    assert.ok(compared > 200_000);
    assert.ok(matched > compared / 50, `${matched} of ${compared} matched`);
  });

  it('searches exactly the well-formed patterns of literals and stars, and simulates the rest', () => {
    for (const pattern of ['x*.md', '*', '*.txt', 'a*b*c', 'plain', '😀*é']) {
      assert.equal(compileSegmentMatcher(pattern).method, 'search', pattern);
    }
    for (const pattern of ['x?.md', '[ab]*', '{a,b}*', 'x*.m[d]', '*\ude00', '\ud83d*']) {
      assert.equal(compileSegmentMatcher(pattern).method, 'simulation', pattern);
    }
  });

  it('answers the cases a greedy search gets wrong when written carelessly', () => {
    const cases: [string, string, boolean][] = [
      ['a*a', 'a', false], // the first and last runs must not overlap
      ['a*a', 'aa', true],
      ['*ab*ab', 'abab', true],
      ['*ab*ab', 'aba', false], // a middle run must end before the last run begins
      ['x*.md', 'x.md', true],
      ['x*.md', 'x.m', false],
      ['*.txt', '.txt', true],
      ['*', '', true],
      ['*', 'a/b', false], // a star never covers "/"
      ['a*b', 'a/b', false],
      ['*😀', '\ude00', false], // a run of the pattern never matches half a pair
      ['*\u00e9', 'e\u0301', false], // code points, not normalised text
      ['b*', 'ab', false],
      // A pattern holding half a pair is simulated: searched, its half would match inside the name's pair.
      ['*\ude00', '😀', false],
      ['\ud83d*', '😀', false],
      ['*\ude00', '\ude00', true],
    ];
    for (const [pattern, name, expected] of cases) {
      assert.equal(
        compileSegmentMatcher(pattern).matches(name),
        expected,
        `${pattern} vs ${JSON.stringify(name)}`,
      );
      const twin = viaClass(pattern);
      if (twin !== undefined) assert.equal(compileSegmentMatcher(twin).matches(name), expected, `${twin}`);
    }
  });
});
