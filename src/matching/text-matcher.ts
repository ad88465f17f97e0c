import type { Matcher } from '../models/matcher.js';
import { regexFlags } from '../models/matcher.js';
import { type SearchOutcome, searchWithTimeout } from './regex-search.js';

/**
 * Evaluates a text matcher (SPEC §2) against text. Pure apart from the regex time bound.
 *
 * - contains: empty text and a blank value never match; with ignoreWhitespace both sides are trimmed.
 * - equals: with ignoreWhitespace both sides are trimmed; `equals("")` matches empty text.
 * - regex: a search (not a full match) over the (trimmed) text, bounded by `regexTimeoutMs`.
 * Case-insensitive comparison folds both sides (upper then lower case, so "ß" meets "SS"). A regex uses the
 * RegExp `i` flag instead (simple case folding, so there "ß" does not meet "SS").
 */

export const DEFAULT_REGEX_TIMEOUT_MS = 1000;

export interface MatchTextOptions {
  regexTimeoutMs?: number;
}

export type MatchOutcome = SearchOutcome;

export function matchText(matcher: Matcher, text: string, options: MatchTextOptions = {}): MatchOutcome {
  const subject = matcher.ignoreWhitespace ? text.trim() : text;
  switch (matcher.matcherType) {
    case 'contains': {
      const value = matcher.ignoreWhitespace ? matcher.value.trim() : matcher.value;
      if (text === '' || matcher.value.trim() === '') return 'no_match';
      return fold(subject, matcher.caseSensitive).includes(fold(value, matcher.caseSensitive))
        ? 'match'
        : 'no_match';
    }
    case 'equals': {
      const value = matcher.ignoreWhitespace ? matcher.value.trim() : matcher.value;
      return fold(subject, matcher.caseSensitive) === fold(value, matcher.caseSensitive)
        ? 'match'
        : 'no_match';
    }
    case 'regex': {
      const pattern = new RegExp(matcher.value, regexFlags(matcher.caseSensitive));
      return searchWithTimeout(pattern, subject, options.regexTimeoutMs ?? DEFAULT_REGEX_TIMEOUT_MS);
    }
  }
}

/**
 * Case folding that is the same for a character wherever it stands. `toLowerCase` writes a capital sigma
 * as final "ς" at the end of a word and "σ" elsewhere, so without the last step "ΣΑΣ" would not be found
 * in "ΣΑΣΑ", and a truncated prefix could fold differently from the whole text.
 */
function fold(text: string, caseSensitive: boolean): string {
  return caseSensitive ? text : text.toUpperCase().toLowerCase().replaceAll('ς', 'σ');
}
