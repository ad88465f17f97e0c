import { Option } from 'commander';
import { contains, equals, type Matcher, type MatcherOptions, regex } from '../models/matcher.js';
import { LIMIT_NAMES, type SourceLimits } from '../sources/local-file/limits.js';
import { UsageError } from './usage-error.js';

/** Flags shared by several commands, and their conversion to library options. */

const LIMIT_FLAGS: Record<(typeof LIMIT_NAMES)[number], { flag: string; help: string }> = {
  maxFiles: { flag: '--max-files <n>', help: 'candidate files per acquisition (default 1000)' },
  maxContentBytes: { flag: '--max-content-bytes <n>', help: 'text retained per file (default 1000000)' },
  maxReadBytes: {
    flag: '--max-read-bytes <n>',
    help: 'bytes read and hashed per acquisition (default 16000000)',
  },
  maxListedEntries: {
    flag: '--max-listed-entries <n>',
    help: 'directory entries examined per acquisition (default 100000)',
  },
};

export function limitOptions(): Option[] {
  return LIMIT_NAMES.map((name) => new Option(LIMIT_FLAGS[name].flag, LIMIT_FLAGS[name].help));
}

export function matcherOptions(): Option[] {
  return [
    new Option('--contains <text>', 'content must contain this text').conflicts(['equals', 'regex']),
    new Option('--equals <text>', 'content must equal this text').conflicts(['contains', 'regex']),
    new Option(
      '--regex <pattern>',
      'content must match this JavaScript regular expression (a search)',
    ).conflicts(['contains', 'equals']),
    new Option('--case-sensitive', 'compare case-sensitively (default: case-insensitive)'),
    new Option('--keep-whitespace', 'do not trim surrounding whitespace before comparing (default: trim)'),
  ];
}

/** Reads --max-* flags: each must be a positive whole number. */
export function readLimits(options: Record<string, unknown>): Partial<SourceLimits> {
  const limits: Partial<SourceLimits> = {};
  for (const name of LIMIT_NAMES) {
    const raw = options[name];
    if (raw === undefined) continue;
    const text = String(raw);
    const flag = LIMIT_FLAGS[name].flag.split(' ')[0];
    if (!/^[1-9][0-9]*$/.test(text) || !Number.isSafeInteger(Number(text))) {
      throw new UsageError(`${flag} takes a positive whole number, got ${JSON.stringify(text)}`);
    }
    limits[name] = Number(text);
  }
  return limits;
}

/** Reads matcher flags; undefined when none was given (the criterion is then "nonempty content"). */
export function readMatcher(options: Record<string, unknown>): Matcher | undefined {
  const matcherOptions: MatcherOptions = {
    caseSensitive: options.caseSensitive === true,
    ignoreWhitespace: options.keepWhitespace !== true,
  };
  if (typeof options.contains === 'string') return contains(options.contains, matcherOptions);
  if (typeof options.equals === 'string') return equals(options.equals, matcherOptions);
  if (typeof options.regex === 'string') return regex(options.regex, matcherOptions);
  if (options.caseSensitive === true || options.keepWhitespace === true) {
    throw new UsageError(
      '--case-sensitive and --keep-whitespace modify a matcher: add --contains, --equals or --regex',
    );
  }
  return undefined;
}
