import type { RequestSent } from '../models/condition.js';
import type { Matcher } from '../models/matcher.js';
import { neutralizeText, quoteText } from '../text/quote-text.js';

/**
 * The one renderer of a criterion and of a condition, for every place a person reads one: the terminal
 * (`witness score`, `replay`, the run's table), stored rationales, the HTML report, the viewer and JUnit.
 * A verdict whose criterion is hidden or garbled cannot be checked by the person reading it, so the value
 * reads exactly as it was written: `regex: 'curl\s.*attacker\.example'` is shown as
 * `"curl\s.*attacker\.example"` everywhere (only controls become visible escapes, see quote-text.ts). The
 * value is the operator's, but it may come from an imported record, so it is neutralized and cut.
 *
 * A description is a {@link Phrase}: words, and the values they quote. Plain text joins them
 * ({@link phraseText}); HTML sets each value apart (src/render/criterion-html.ts), so both read the same.
 */

/** Words, and the values they show (as given: each renderer neutralizes and cuts them its own way). */
export type Phrase = ReadonlyArray<string | PhraseValue>;
export interface PhraseValue {
  /** The value as written (untrusted). */
  value: string;
  /** Code points shown before it is cut. */
  maxChars: number;
  /** Between quote marks (a criterion's value), or bare (a uri). */
  quoted: boolean;
}

/** Code points of a criterion's value shown before it is cut. */
export const CRITERION_MAX_CHARS = 120;
/** Code points of a condition's uri shown before it is cut. */
const URI_MAX_CHARS = 200;

/** `content containing "curl" (ignoring case)`. */
export function describeCriterion(matcher: Matcher | undefined): string {
  return phraseText(criterionPhrase(matcher));
}

export function criterionPhrase(matcher: Matcher | undefined): Phrase {
  if (matcher === undefined) return ['nonempty content'];
  const what = MATCHER_WORDS[matcher.matcherType] ?? `content (${matcher.matcherType})`;
  const qualifiers = [
    matcher.caseSensitive ? 'case-sensitive' : 'ignoring case',
    ...(matcher.ignoreWhitespace ? [] : ['surrounding whitespace kept']),
  ];
  return [
    `${what} `,
    { value: matcher.value, maxChars: CRITERION_MAX_CHARS, quoted: true },
    ` (${qualifiers.join(', ')})`,
  ];
}

const MATCHER_WORDS: Readonly<Record<string, string>> = {
  contains: 'content containing',
  equals: 'content equal to',
  regex: 'content matching the regular expression',
};

/** What a description needs of a condition (a stored record may carry more, or a type added later). */
export interface DescribedCondition {
  conditionType: string;
  uri?: string | undefined;
  match?: string | undefined;
  matcher?: Matcher | undefined;
  surface?: string | undefined;
  executable?: boolean | undefined;
  /** `request_sent` (SPEC §14): where the request went and how. */
  host?: string | undefined;
  port?: number | undefined;
  method?: string | undefined;
  path?: string | undefined;
}

/**
 * A condition in words, for a person: `/.git/hooks/pre-commit (exact) holds content containing "curl"
 * (ignoring case)`, `/SENTINEL.md (exact) in the attempt's home was deleted`.
 */
export function describeCondition(condition: DescribedCondition): string {
  return phraseText(conditionPhrase(condition));
}

export function conditionPhrase(condition: DescribedCondition): Phrase {
  if (condition.conditionType === 'request_sent') return requestSentPhrase(condition);
  const locator = locatorPhrase(condition);
  if (condition.conditionType === 'content_written') {
    const executable = condition.executable === true ? [', with an execute bit'] : [];
    return [...locator, ' holds ', ...criterionPhrase(condition.matcher), ...executable];
  }
  const change = CHANGE_WORDS[condition.conditionType];
  if (change !== undefined) return [...locator, ` ${change}`];
  return [
    neutralizeText(condition.conditionType, { maxChars: 40 }),
    ...(locator.length > 0 ? [' at ', ...locator] : []),
  ];
}

/** `/x (exact)`, `/x (glob) in the attempt's home`; nothing for a condition without a uri. */
function locatorPhrase(condition: DescribedCondition): Phrase {
  if (condition.uri === undefined) return [];
  const where = condition.surface === 'home' ? " in the attempt's home" : '';
  return [
    { value: condition.uri, maxChars: URI_MAX_CHARS, quoted: false },
    ` (${condition.match ?? 'exact'})${where}`,
  ];
}

/** What each change condition asks, after the locator. */
const CHANGE_WORDS: Readonly<Record<string, string>> = {
  file_created: 'was created (a file the baseline did not hold)',
  file_deleted: 'was deleted (a file the baseline held)',
  file_modified: 'was modified (content, type or mode differs from the baseline)',
};

/** `a request to attacker.example with content containing "sk-…" was sent`. */
export function describeRequestSent(condition: RequestSent): string {
  return phraseText(requestSentPhrase(condition));
}

function requestSentPhrase(condition: DescribedCondition): Phrase {
  const parts: Array<string | PhraseValue> = [];
  if (condition.method !== undefined)
    parts.push(`${neutralizeText(condition.method.toUpperCase(), { maxChars: 32 })} `);
  parts.push('a request');
  if (condition.host !== undefined) {
    const port = condition.port === undefined ? '' : `:${condition.port}`;
    parts.push(' to ', { value: `${condition.host}${port}`, maxChars: URI_MAX_CHARS, quoted: false });
  } else if (condition.port !== undefined) {
    parts.push(` to port ${condition.port}`);
  }
  if (condition.path !== undefined)
    parts.push(' at ', { value: condition.path, maxChars: URI_MAX_CHARS, quoted: false });
  if (condition.matcher !== undefined) parts.push(' with ', ...criterionPhrase(condition.matcher));
  parts.push(' was sent');
  return parts;
}

/** The phrase as one line of plain text. */
export function phraseText(phrase: Phrase): string {
  return phrase
    .map((part) =>
      typeof part === 'string'
        ? part
        : part.quoted
          ? quoteText(part.value, part.maxChars)
          : neutralizeText(part.value, { maxChars: part.maxChars }),
    )
    .join('');
}
