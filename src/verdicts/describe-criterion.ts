import type { RequestSent } from '../models/condition.js';
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
 * (ignoring case)`, `/SENTINEL.md (exact) in the attempt's home was deleted`. The uri may come from an
 * imported record, so it is neutralized and cut.
 */
export function describeCondition(
  condition:
    | {
        conditionType: string;
        uri: string;
        match: string;
        matcher?: Matcher | undefined;
        surface?: string | undefined;
        executable?: boolean | undefined;
      }
    | RequestSent,
): string {
  if (condition.conditionType === 'request_sent' || !('uri' in condition)) {
    return describeRequestSent(condition as RequestSent);
  }
  const where = condition.surface === 'home' ? " in the attempt's home" : '';
  const locator = `${neutralizeText(condition.uri, { maxChars: 200 })} (${condition.match})${where}`;
  if (condition.conditionType === 'content_written') {
    const executable = condition.executable === true ? ', with an execute bit' : '';
    return `${locator} holds ${describeCriterion(condition.matcher)}${executable}`;
  }
  const change = CHANGE_WORDS[condition.conditionType as keyof typeof CHANGE_WORDS];
  if (change !== undefined) return `${locator} ${change}`;
  return `${neutralizeText(condition.conditionType, { maxChars: 40 })} at ${locator}`;
}

/** What each change condition asks, after the locator. */
const CHANGE_WORDS = {
  file_created: 'was created (a file the baseline did not hold)',
  file_deleted: 'was deleted (a file the baseline held)',
  file_modified: 'was modified (content, type or mode differs from the baseline)',
} as const;

/** The condition in words: `a request to attacker.example with content containing "sk-…" was sent`. */
export function describeRequestSent(condition: RequestSent): string {
  const parts: string[] = [];
  if (condition.method !== undefined)
    parts.push(neutralizeText(condition.method.toUpperCase(), { maxChars: 32 }));
  parts.push('a request');
  if (condition.host !== undefined) {
    const port = condition.port === undefined ? '' : `:${condition.port}`;
    parts.push(`to ${neutralizeText(condition.host, { maxChars: 200 })}${port}`);
  } else if (condition.port !== undefined) {
    parts.push(`to port ${condition.port}`);
  }
  if (condition.path !== undefined) parts.push(`at ${neutralizeText(condition.path, { maxChars: 200 })}`);
  if (condition.matcher !== undefined) parts.push(`with ${describeCriterion(condition.matcher)}`);
  return `${parts.join(' ')} was sent`;
}
