import { InvalidLocatorError } from '../errors.js';
import { compileSegmentMatcher, extendedGlobError, type SegmentMatcher } from './segment-matcher.js';
import type { MatchKind } from './vocabulary.js';

/**
 * A locator names a location inside a workspace root: a POSIX-style, root-relative uri plus a match kind.
 * Parsing happens before any I/O, so a locator that could name the root itself or anything outside it is
 * an error, never a read.
 */

/** One segment of a parsed glob: a literal name, `**`, or a pattern tested against one name. */
export type GlobSegment =
  | { kind: 'literal'; name: string }
  | { kind: 'globstar' }
  | {
      kind: 'pattern';
      /** The segment as written. */
      source: string;
      /** The linear-time matcher every name goes through (see segment-matcher.ts). */
      matcher: SegmentMatcher;
    };

export interface ParsedLocator {
  uri: string;
  match: MatchKind;
  /** Path segments below the root; for a glob, `**` runs are collapsed into one. */
  segments: readonly string[];
  /** Only for globs: each segment compiled. */
  glob?: readonly GlobSegment[];
}

/** A UTF-16 surrogate without its pair: no UTF-8 name can be spelled by it. */
const LONE_SURROGATE = /\p{Cs}/u;

const HINT = 'must name a location inside the root, e.g. "/notes/todo.txt" or "/out/**/*.sh"';

/** Splits and validates a uri. Throws {@link InvalidLocatorError} naming the problem and the fix. */
export function parseLocator(uri: string, match: MatchKind = 'exact'): ParsedLocator {
  if (typeof uri !== 'string') throw new InvalidLocatorError(`locator uri must be a string; it ${HINT}`);
  if (uri.includes('\0')) throw new InvalidLocatorError(`locator uri contains a NUL byte; it ${HINT}`);
  if (LONE_SURROGATE.test(uri)) {
    // Encoding would silently replace it with U+FFFD and read a different file than the one named.
    throw new InvalidLocatorError(
      `locator uri contains an unpaired UTF-16 surrogate; a uri must be well-formed Unicode`,
    );
  }
  if (uri.includes('\\')) {
    throw new InvalidLocatorError(
      `locator uri ${JSON.stringify(uri)} contains a backslash; use "/" to separate segments (it ${HINT})`,
    );
  }
  const body = uri.startsWith('/') ? uri.slice(1) : uri;
  if (body === '')
    throw new InvalidLocatorError(`locator uri ${JSON.stringify(uri)} names the root itself; it ${HINT}`);
  const segments = body.split('/');
  for (const segment of segments) {
    if (segment === '..') {
      throw new InvalidLocatorError(`locator uri ${JSON.stringify(uri)} has a ".." segment; it ${HINT}`);
    }
    if (segment === '' || segment === '.') {
      throw new InvalidLocatorError(
        `locator uri ${JSON.stringify(uri)} has an empty or "." segment (a doubled or trailing "/"); it ${HINT}`,
      );
    }
  }
  if (match === 'exact') return { uri, match, segments };
  if (match !== 'glob')
    throw new InvalidLocatorError(`locator match must be "exact" or "glob", got ${String(match)}`);
  if (body.startsWith('!')) {
    throw new InvalidLocatorError(
      `glob ${JSON.stringify(uri)} is negated with "!"; negation is not supported, name what to include`,
    );
  }
  const collapsed: string[] = [];
  for (const segment of segments) {
    if (segment === '**' && collapsed[collapsed.length - 1] === '**') continue;
    collapsed.push(segment);
  }
  const glob = collapsed.map((segment) => compileSegment(segment, uri));
  return { uri, match, segments: collapsed, glob };
}

/**
 * True exactly when `parseLocator(uri, 'exact')` accepts `uri` (a string, no NUL, no unpaired surrogate,
 * no backslash, not the root, no empty, "." or ".." segment), without building anything. The per-entry
 * check of a `/**` scope: `parseLocator` on each of 100,000 entry uris (≈ 0.6 µs each) sat on the serial
 * tail of the acquisition, after the walk, where no other thread can hide it. ONE RULE, TWO IMPLEMENTATIONS:
 * locator.test.ts proves them equal on generated and adversarial uris.
 */
function isExactUri(uri: string): boolean {
  if (typeof uri !== 'string' || uri.includes('\0') || uri.includes('\\')) return false;
  if (!(uri as unknown as { isWellFormed(): boolean }).isWellFormed()) return false;
  const SLASH = 47;
  const DOT = 46;
  let start = uri.charCodeAt(0) === SLASH ? 1 : 0;
  if (start === uri.length) return false;
  for (let i = start; i <= uri.length; i++) {
    if (i < uri.length && uri.charCodeAt(i) !== SLASH) continue;
    const length = i - start;
    if (length === 0) return false;
    if (length <= 2 && uri.charCodeAt(start) === DOT && (length === 1 || uri.charCodeAt(start + 1) === DOT)) {
      return false;
    }
    start = i + 1;
  }
  return true;
}

/** True when a segment holds glob syntax (otherwise it is opened by name, never found by listing). */
export function hasGlobSyntax(segment: string): boolean {
  return /[*?[{]/.test(segment);
}

function compileSegment(segment: string, uri: string): GlobSegment {
  if (segment === '**') return { kind: 'globstar' };
  // Checked before deciding the segment is literal: "@(a|b).txt" has no other glob syntax.
  if (/[@+!]\(/.test(segment) && !segment.includes('[')) throw extendedGlobError(uri);
  if (!hasGlobSyntax(segment)) return { kind: 'literal', name: segment };
  return { kind: 'pattern', source: segment, matcher: compileSegmentMatcher(segment, uri) };
}

/** True when a name matches one compiled glob segment (`**` matches any name). */
export function matchesSegment(segment: GlobSegment, name: string): boolean {
  if (segment.kind === 'globstar') return true;
  if (segment.kind === 'literal') return segment.name === name;
  return segment.matcher.matches(name);
}

/**
 * True when an entry uri could have been found by this locator: a uri inside the root (no `..`, no
 * empty segment) whose segments the glob matches, `**` standing for zero or more directories (a trailing
 * `**` for one or more names, since it matches the files beneath). Used to refuse stored evidence that
 * names a path its locator could never have read.
 */
export function matchesLocator(locator: ParsedLocator, uri: string): boolean {
  // `/**` matches every uri inside the root: only the uri's own validity is left to check.
  if (locator.glob?.length === 1 && locator.glob[0]?.kind === 'globstar') return isExactUri(uri);
  let entry: ParsedLocator;
  try {
    entry = parseLocator(uri, 'exact');
  } catch {
    return false;
  }
  if (locator.match === 'exact') return entry.segments.join('/') === locator.segments.join('/');
  const glob = locator.glob ?? [];
  const names = entry.segments;
  const memo = new Map<number, boolean>();
  const from = (i: number, j: number): boolean => {
    const key = i * (names.length + 1) + j;
    const known = memo.get(key);
    if (known !== undefined) return known;
    let result: boolean;
    const segment = glob[i];
    if (segment === undefined) result = j === names.length;
    else if (segment.kind === 'globstar') {
      result =
        i === glob.length - 1 ? j < names.length : from(i + 1, j) || (j < names.length && from(i, j + 1));
    } else result = j < names.length && matchesSegment(segment, names[j] as string) && from(i + 1, j + 1);
    memo.set(key, result);
    return result;
  };
  return from(0, 0);
}
