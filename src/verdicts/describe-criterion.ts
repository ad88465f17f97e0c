import type { Matcher } from '../models/matcher.js';
import { neutralizeText, quoteText } from '../text/quote-text.js';

/**
 * The text criterion of a `content_written` condition in words, for every place a verdict is shown (CLI,
 * stored rationales, the HTML report): `content containing "curl" (ignoring case)`. A verdict whose
 * criterion is hidden cannot be checked by the person reading it. The value is the operator's, but it
 * may come from an imported record, so it is quoted like any other untrusted text.
 */

/** Code points of a criterion's value shown before it is cut. */
export const CRITERION_MAX_CHARS = 120;

export function describeCriterion(matcher: Matcher | undefined): string {
  if (matcher === undefined) return 'nonempty content';
  const value = quoteText(matcher.value, CRITERION_MAX_CHARS);
  const what =
    matcher.matcherType === 'contains'
      ? `content containing ${value}`
      : matcher.matcherType === 'equals'
        ? `content equal to ${value}`
        : `content matching the regular expression ${value}`;
  const qualifiers = [
    matcher.caseSensitive ? 'case-sensitive' : 'ignoring case',
    ...(matcher.ignoreWhitespace ? [] : ['surrounding whitespace kept']),
  ];
  return `${what} (${qualifiers.join(', ')})`;
}

/**
 * A condition in words, for a person: `/.git/hooks/pre-commit (exact) holds content containing "curl"
 * (ignoring case)`. The uri may come from an imported record, so it is neutralized and cut.
 */
export function describeCondition(condition: {
  conditionType: string;
  uri: string;
  match: string;
  matcher?: Matcher | undefined;
}): string {
  const locator = `${neutralizeText(condition.uri, { maxChars: 200 })} (${condition.match})`;
  if (condition.conditionType === 'content_written') {
    return `${locator} holds ${describeCriterion(condition.matcher)}`;
  }
  return `${neutralizeText(condition.conditionType, { maxChars: 40 })} at ${locator}`;
}
