import { z } from 'zod';
import { InvalidMatcherError } from '../errors.js';
import { parseRecord } from './record.js';

/**
 * Text matchers shared by every text criterion (SPEC §2). Defaults: case-insensitive, surrounding
 * whitespace ignored. Regex patterns are JavaScript RegExp syntax in Unicode mode (the `u` flag).
 */

const matcherOptions = {
  value: z.string(),
  caseSensitive: z.boolean().default(false),
  ignoreWhitespace: z.boolean().default(true),
};

export const ContainsMatcherSchema = z.strictObject({
  matcherType: z.literal('contains'),
  ...matcherOptions,
});
export const EqualsMatcherSchema = z.strictObject({ matcherType: z.literal('equals'), ...matcherOptions });
export const RegexMatcherSchema = z
  .strictObject({ matcherType: z.literal('regex'), ...matcherOptions })
  .superRefine((matcher, ctx) => {
    const problem = regexProblem(matcher.value);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', path: ['value'], message: problem });
  });

export const MatcherSchema = z.discriminatedUnion('matcherType', [
  ContainsMatcherSchema,
  EqualsMatcherSchema,
  RegexMatcherSchema,
]);

export type ContainsMatcher = z.infer<typeof ContainsMatcherSchema>;
export type EqualsMatcher = z.infer<typeof EqualsMatcherSchema>;
export type RegexMatcher = z.infer<typeof RegexMatcherSchema>;
export type Matcher = z.infer<typeof MatcherSchema>;

export interface MatcherOptions {
  caseSensitive?: boolean;
  ignoreWhitespace?: boolean;
}

/** The RegExp flags a regex matcher compiles with. */
export function regexFlags(caseSensitive: boolean): string {
  return caseSensitive ? 'u' : 'iu';
}

function regexProblem(pattern: string): string | undefined {
  try {
    new RegExp(pattern, 'u');
    return undefined;
  } catch (error) {
    return `not a valid JavaScript regular expression (Unicode mode): ${(error as Error).message}`;
  }
}

function build(matcherType: Matcher['matcherType'], value: string, options: MatcherOptions): Matcher {
  if (typeof value !== 'string')
    throw new InvalidMatcherError(`${matcherType} matcher value must be a string`);
  try {
    return parseRecord(MatcherSchema, { matcherType, value, ...options }, `${matcherType} matcher`);
  } catch (error) {
    throw new InvalidMatcherError((error as Error).message, { cause: error });
  }
}

/** Matches when the text contains `value` (a blank value never matches). */
export function contains(value: string, options: MatcherOptions = {}): ContainsMatcher {
  return build('contains', value, options) as ContainsMatcher;
}

/** Matches when the text equals `value` (trimmed on both sides unless ignoreWhitespace is false). */
export function equals(value: string, options: MatcherOptions = {}): EqualsMatcher {
  return build('equals', value, options) as EqualsMatcher;
}

/** Matches when `pattern` is found anywhere in the text (a search, not a full match). Validated here. */
export function regex(pattern: string, options: MatcherOptions = {}): RegexMatcher {
  return build('regex', pattern, options) as RegexMatcher;
}
