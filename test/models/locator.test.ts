import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidLocatorError } from '../../src/errors.js';
import {
  type GlobSegment,
  hasGlobSyntax,
  matchesLocator,
  matchesSegment,
  parseLocator,
} from '../../src/models/locator.js';
import type { MatchKind } from '../../src/models/vocabulary.js';
import { fullSamples } from '../support/sample-size.js';

const BOTH_KINDS: readonly MatchKind[] = ['exact', 'glob'];

function rejects(uri: string, match: MatchKind, message: RegExp): void {
  assert.throws(
    () => parseLocator(uri, match),
    (error: unknown) =>
      error instanceof InvalidLocatorError && error.code === 'invalid_locator' && message.test(error.message),
    `${JSON.stringify(uri)} (${match}) should be rejected with ${message}`,
  );
}

/** The single compiled segment of a one-segment glob. */
function segmentOf(pattern: string): GlobSegment {
  const parsed = parseLocator(`/${pattern}`, 'glob');
  assert.equal(parsed.glob?.length, 1);
  return parsed.glob?.[0] as GlobSegment;
}

function matching(pattern: string, names: readonly string[]): string[] {
  const segment = segmentOf(pattern);
  return names.filter((name) => matchesSegment(segment, name));
}

describe('parseLocator', () => {
  it('rejects a ".." segment before any I/O', () => {
    assert.throws(() => parseLocator('/a/../b'), InvalidLocatorError);
  });

  it('rejects the root itself and the empty path', () => {
    for (const uri of ['/', '']) assert.throws(() => parseLocator(uri), /inside the root/);
  });

  it('collapses runs of ** and compiles each glob segment', () => {
    const parsed = parseLocator('/data/**/**/*.{sh,py}', 'glob');
    assert.deepEqual(parsed.segments, ['data', '**', '*.{sh,py}']);
    const last = parsed.glob?.[2];
    assert.ok(last);
    assert.equal(matchesSegment(last, 'run.sh'), true);
    assert.equal(matchesSegment(last, '.hidden.py'), true);
    assert.equal(matchesSegment(last, 'run.js'), false);
  });

  it('splits an exact uri into its segments below the root', () => {
    assert.deepEqual(parseLocator('/notes/todo.txt'), {
      uri: '/notes/todo.txt',
      match: 'exact',
      segments: ['notes', 'todo.txt'],
    });
  });

  it('reads a uri without the leading "/" as relative to the root too', () => {
    assert.deepEqual(parseLocator('notes/todo.txt').segments, ['notes', 'todo.txt']);
  });

  for (const match of BOTH_KINDS) {
    it(`rejects a ".." segment at the start, middle or end (${match})`, () => {
      for (const uri of ['/../etc/passwd', '..', '/a/../b', '/a/..']) rejects(uri, match, /inside the root/);
    });

    it(`rejects the root itself, "/." and the empty path (${match})`, () => {
      for (const uri of ['', '/', '/.']) rejects(uri, match, /inside the root/);
    });

    it(`rejects "." segments, doubled and trailing slashes (${match})`, () => {
      for (const uri of ['/a/./b', '/a//b', '/a/', '//a']) rejects(uri, match, /inside the root/);
    });

    it(`rejects a backslash, which could separate segments elsewhere (${match})`, () => {
      rejects('/a\\..\\b', match, /backslash/);
      rejects('\\a', match, /backslash/);
    });

    it(`rejects a NUL byte, which would cut the path short (${match})`, () => {
      rejects('/a\0/b', match, /NUL/);
    });

    it(`keeps dots inside names, which are not ".." segments (${match})`, () => {
      assert.deepEqual(parseLocator('/a/..b/c..', match).segments, ['a', '..b', 'c..']);
    });
  }

  it('rejects a match kind that is neither exact nor glob', () => {
    rejects('/a', 'regex' as MatchKind, /"exact" or "glob"/);
  });

  it('rejects a negated glob, with or without the leading "/"', () => {
    rejects('!/data/*.txt', 'glob', /negat/);
    rejects('/!data/*.txt', 'glob', /negat/);
  });

  it('reads glob characters in an exact uri as part of the name', () => {
    assert.deepEqual(parseLocator('/!data/[x*{', 'exact'), {
      uri: '/!data/[x*{',
      match: 'exact',
      segments: ['!data', '[x*{'],
    });
  });

  it('compiles literal segments, ** and patterns separately', () => {
    const parsed = parseLocator('/data/**/*.txt', 'glob');
    assert.deepEqual(
      { ...parsed, glob: parsed.glob?.map(withoutMatcher) },
      {
        uri: '/data/**/*.txt',
        match: 'glob',
        segments: ['data', '**', '*.txt'],
        glob: [{ kind: 'literal', name: 'data' }, { kind: 'globstar' }, { kind: 'pattern', source: '*.txt' }],
      },
    );
  });

  it('reads "**" inside a longer segment as "*", not as a globstar', () => {
    assert.deepEqual(withoutMatcher(segmentOf('a**')), { kind: 'pattern', source: 'a**' });
    assert.deepEqual(matching('a**', ['a', 'ab', 'a/b', 'ba']), ['a', 'ab']);
  });

  it('rejects an unterminated "[" or "{"', () => {
    rejects('/data/[abc', 'glob', /unterminated "\["/);
    rejects('/data/[!]', 'glob', /unterminated "\["/);
    rejects('/data/{a,b', 'glob', /unterminated "\{"/);
    rejects('/data/{a,{b,c}', 'glob', /unterminated "\{"/);
  });

  it('rejects a character range out of order as an invalid locator, not a SyntaxError', () => {
    rejects('/data/[z-a]*', 'glob', /invalid segment/);
  });

  it('rejects extended glob syntax rather than reading it as literal text', () => {
    for (const pattern of ['@(a|b).txt', '+(a).txt', '!(a)*', 'x*(a)', 'x?(a)', 'a*/@(b|c)']) {
      rejects(`/data/${pattern}`, 'glob', /extended glob/);
    }
  });
});

describe('glob segment matching', () => {
  it('matches "*" against any run of characters within one name, including none', () => {
    assert.deepEqual(matching('out*.txt', ['out.txt', 'out-1.txt', 'out.txt.bak', 'xout.txt']), [
      'out.txt',
      'out-1.txt',
    ]);
  });

  it('never lets "*" or "?" cross a "/"', () => {
    assert.deepEqual(matching('a*', ['a/b']), []);
    assert.deepEqual(matching('a?b', ['a/b']), []);
  });

  it('matches dotfiles with "*"', () => {
    assert.deepEqual(matching('*', ['.env', 'plain']), ['.env', 'plain']);
    assert.deepEqual(matching('*.txt', ['.secret.txt']), ['.secret.txt']);
  });

  it('matches "?" against exactly one character, an astral one included', () => {
    assert.deepEqual(matching('a?c', ['abc', 'ac', 'abbc', 'a😀c']), ['abc', 'a😀c']);
  });

  it('matches a character class, a range and a negated class with "!" or "^"', () => {
    const names = ['a1', 'b1', 'x1', 'd1'];
    assert.deepEqual(matching('[ab]1', names), ['a1', 'b1']);
    assert.deepEqual(matching('[a-c]1', names), ['a1', 'b1']);
    assert.deepEqual(matching('[!x]1', names), ['a1', 'b1', 'd1']);
    assert.deepEqual(matching('[^x]1', names), ['a1', 'b1', 'd1']);
  });

  it('reads "]" first in a class as a member, and glob characters inside a class literally', () => {
    assert.deepEqual(matching('[]a]', [']', 'a', 'b']), [']', 'a']);
    assert.deepEqual(matching('[*?{]', ['*', '?', '{', 'x']), ['*', '?', '{']);
    assert.deepEqual(matching('x[(]1).txt', ['x(1).txt', 'x11).txt']), ['x(1).txt']);
  });

  it('matches brace alternatives, nested and empty ones included', () => {
    assert.deepEqual(matching('*.{sh,py}', ['a.sh', 'a.py', 'a.js']), ['a.sh', 'a.py']);
    assert.deepEqual(matching('{a,{b,c}}.txt', ['a.txt', 'b.txt', 'c.txt', 'd.txt']), [
      'a.txt',
      'b.txt',
      'c.txt',
    ]);
    assert.deepEqual(matching('out{,.bak}*', ['out', 'out.bak', 'outx']), ['out', 'out.bak', 'outx']);
  });

  it('treats regex-special characters outside globs as themselves', () => {
    assert.deepEqual(matching('a+b.$*', ['a+b.$1', 'aab.$1', 'a+bx$1']), ['a+b.$1']);
    assert.deepEqual(matching('^(x)|*', ['^(x)|y', 'x']), ['^(x)|y']);
    assert.deepEqual(matching('a,b}*', ['a,b}1']), ['a,b}1']);
  });

  it('treats "-" outside a class as itself', () => {
    assert.deepEqual(matching('my-file*.txt', ['my-file1.txt', 'myxfile1.txt']), ['my-file1.txt']);
  });

  it('matches names case-sensitively, as the file system does', () => {
    assert.deepEqual(matching('*.TXT', ['a.txt', 'a.TXT']), ['a.TXT']);
  });

  it('matches a literal segment by equality only and ** against any name', () => {
    assert.equal(matchesSegment({ kind: 'literal', name: 'data' }, 'data'), true);
    assert.equal(matchesSegment({ kind: 'literal', name: 'data' }, 'Data'), false);
    assert.equal(matchesSegment({ kind: 'globstar' }, '.git'), true);
  });
});

describe('hasGlobSyntax', () => {
  it('is true exactly for segments holding "*", "?", "[" or "{"', () => {
    assert.deepEqual(['a*', 'a?', '[a]', '{a}', 'plain.txt', 'a!b', 'a}b'].map(hasGlobSyntax), [
      true,
      true,
      true,
      true,
      false,
      false,
      false,
    ]);
  });
});

/** A compiled segment without its matcher function, so it can be compared as data. */
function withoutMatcher(segment: GlobSegment): object {
  if (segment.kind !== 'pattern') return segment;
  const { matcher: _matcher, ...data } = segment;
  return data;
}

describe('matchesLocator for "/**" (its own check of the uri, without parseLocator)', () => {
  const everything = parseLocator('/**', 'glob');
  const acceptedAsExact = (uri: string): boolean => {
    try {
      parseLocator(uri, 'exact');
      return true;
    } catch (error) {
      assert.ok(error instanceof InvalidLocatorError, String(error));
      return false;
    }
  };

  // Up to 5 characters: 177,156 uris. `npm test` goes to 4 (16,105); the heavy lane to 5 (sample-size.ts).
  const longest = fullSamples() ? 5 : 4;
  it(`agrees with parseLocator(uri, "exact") on every uri of up to ${longest} hostile characters`, () => {
    // Every character the rule looks at, and one of each kind it must let through.
    const alphabet = ['a', '.', '/', '\\', '\0', '\uD800', '\uDC00', '😀', 'é', '*', ' '];
    let accepted = 0;
    let refused = 0;
    const visit = (uri: string, depth: number): void => {
      const expected = acceptedAsExact(uri);
      assert.equal(matchesLocator(everything, uri), expected, JSON.stringify(uri));
      if (expected) accepted++;
      else refused++;
      if (depth === 0) return;
      for (const char of alphabet) visit(uri + char, depth - 1);
    };
    visit('', longest);
    assert.ok(accepted > 1000 && refused > 1000, `accepted ${accepted}, refused ${refused}`);
  });

  it('agrees on uris the walk makes and on the classic escapes', () => {
    for (const uri of [
      '/a/b/c.txt',
      'a/b',
      '/.git/hooks/pre-commit',
      '/a/../b',
      '/a/./b',
      '/a//b',
      '/a/',
      '/',
      '',
      '/..',
      '/...',
      '/a/..b',
      '/a/b..',
      '/ü/\uD83D\uDE00',
      '/a\uD83D',
    ]) {
      assert.equal(matchesLocator(everything, uri), acceptedAsExact(uri), JSON.stringify(uri));
    }
  });
});
