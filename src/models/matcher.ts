import * as z from 'zod';
import { InvalidMatcherError } from '../errors.js';
import { parseRecord } from './record.js';
import { MATCHER_TYPES } from './vocabulary.js';

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

/**
 * The matcher as written by a person: at most one of `contains`/`equals`/`regex`, plus the two options.
 * This is the one spelling the campaign's `expect:` keys and the CLI's matcher flags are derived from
 * ({@link MATCHER_FIELD_SPECS}); {@link matcherFromFields} turns it into a {@link Matcher}.
 */
export const MatcherFieldsShape = {
  contains: z.string().optional(),
  equals: z.string().optional(),
  regex: z.string().optional(),
  caseSensitive: z.boolean().optional(),
  ignoreWhitespace: z.boolean().optional(),
} as const;
export type MatcherFields = {
  -readonly [K in keyof typeof MatcherFieldsShape]?: z.infer<(typeof MatcherFieldsShape)[K]>;
};

export type MatcherFieldName = keyof typeof MatcherFieldsShape;

export interface MatcherFieldSpec {
  /** The command-line flag (`<text>` for a value; a negated flag sets the field to false). */
  flag: string;
  help: string;
  negated?: boolean;
}

/** Each field once, with its flag and help: the campaign keys are the field names themselves. */
export const MATCHER_FIELD_SPECS: Readonly<Record<MatcherFieldName, MatcherFieldSpec>> = {
  contains: { flag: '--contains <text>', help: 'content must contain this text' },
  equals: { flag: '--equals <text>', help: 'content must equal this text' },
  regex: {
    flag: '--regex <pattern>',
    help: 'content must match this JavaScript regular expression (a search)',
  },
  caseSensitive: {
    flag: '--case-sensitive',
    help: 'compare case-sensitively (default: case-insensitive)',
  },
  ignoreWhitespace: {
    flag: '--keep-whitespace',
    help: 'do not trim surrounding whitespace before comparing (default: trim)',
    negated: true,
  },
};

export const CRITERION_FIELDS = MATCHER_TYPES;

/**
 * The matcher the fields describe, or undefined when they name no criterion. Throws InvalidMatcherError
 * for two criteria or for a regex that does not compile; options without a criterion are ignored.
 */
export function matcherFromFields(fields: MatcherFields): Matcher | undefined {
  const given = CRITERION_FIELDS.filter((key) => fields[key] !== undefined);
  if (given.length > 1) {
    throw new InvalidMatcherError(
      `give at most one of ${CRITERION_FIELDS.join(', ')} (got ${given.join(' and ')})`,
    );
  }
  const options: MatcherOptions = {
    ...(fields.caseSensitive === undefined ? {} : { caseSensitive: fields.caseSensitive }),
    ...(fields.ignoreWhitespace === undefined ? {} : { ignoreWhitespace: fields.ignoreWhitespace }),
  };
  const [kind] = given;
  if (kind === undefined) return undefined;
  return build(kind, fields[kind] as string, options);
}
