import { Option } from 'commander';
import {
  LIMIT_NAMES,
  LIMIT_SPECS,
  limitFlag,
  limitProblem,
  type SourceLimits,
} from '../models/evidence-limits.js';
import {
  CRITERION_FIELDS,
  MATCHER_FIELD_SPECS,
  type Matcher,
  type MatcherFieldName,
  type MatcherFields,
  matcherFromFields,
} from '../models/matcher.js';
import { type SurfaceScorable, surface } from '../models/scorable.js';
import { UsageError } from './usage-error.js';

/**
 * Flags shared by several commands, derived from the one schema of each concept (models/evidence-limits.ts,
 * models/matcher.ts): names, help text, defaults and maximums are never typed twice.
 */

export function limitOptions(): Option[] {
  return LIMIT_NAMES.map((name) => {
    const { bounds, defaultValue, maximum } = LIMIT_SPECS[name];
    return new Option(`${limitFlag(name)} <n>`, `${bounds} (default ${defaultValue}, at most ${maximum})`);
  });
}

export function matcherOptions(): Option[] {
  return (Object.keys(MATCHER_FIELD_SPECS) as MatcherFieldName[]).map((field) => {
    const spec = MATCHER_FIELD_SPECS[field];
    const option = new Option(spec.flag, spec.help);
    if ((CRITERION_FIELDS as readonly string[]).includes(field)) {
      option.conflicts(CRITERION_FIELDS.filter((other) => other !== field));
    }
    return option;
  });
}

/** Reads --max-* flags: each a whole number from 1 to its documented maximum. */
export function readLimits(options: Record<string, unknown>): Partial<SourceLimits> {
  const limits: Partial<SourceLimits> = {};
  for (const name of LIMIT_NAMES) {
    const raw = options[name];
    if (raw === undefined) continue;
    const text = String(raw);
    const value = /^[0-9]+$/.test(text) ? Number(text) : Number.NaN;
    const problem = limitProblem(name, value);
    if (problem !== undefined) {
      const { maximum } = LIMIT_SPECS[name];
      throw new UsageError(
        `${limitFlag(name)} takes a positive whole number of at most ${maximum}, got ${JSON.stringify(text)}`,
      );
    }
    limits[name] = value;
  }
  return limits;
}

/** Reads matcher flags; undefined when none was given (the criterion is then "nonempty content"). */
export function readMatcher(options: Record<string, unknown>): Matcher | undefined {
  const fields: MatcherFields = {};
  for (const field of Object.keys(MATCHER_FIELD_SPECS) as MatcherFieldName[]) {
    const spec = MATCHER_FIELD_SPECS[field];
    const value = options[commanderKey(spec.flag)];
    if (value === undefined) continue;
    if (field === 'caseSensitive' || field === 'ignoreWhitespace') {
      fields[field] = spec.negated === true ? value !== true : value === true;
    } else if (typeof value === 'string') fields[field] = value;
  }
  const matcher = matcherFromFields(fields);
  if (
    matcher === undefined &&
    (fields.caseSensitive !== undefined || fields.ignoreWhitespace !== undefined)
  ) {
    const modifiers = [MATCHER_FIELD_SPECS.caseSensitive.flag, MATCHER_FIELD_SPECS.ignoreWhitespace.flag];
    const criteria = CRITERION_FIELDS.map((field) => MATCHER_FIELD_SPECS[field].flag.split(' ')[0]);
    throw new UsageError(
      `${modifiers.join(' and ')} modify a matcher: add ${criteria.slice(0, -1).join(', ')} or ${criteria.at(-1)}`,
    );
  }
  return matcher;
}

/** The property commander stores a flag under: `--keep-whitespace <x>` → `keepWhitespace`. */
function commanderKey(flag: string): string {
  const name = (flag.split(' ')[0] ?? '').replace(/^--/, '');
  return name.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());
}

/** Characters that make a uri a glob (SPEC §10). */
const GLOB_CHARACTERS = /[*?[{]/;

export function locatorOptions(): Option[] {
  return [
    new Option('--glob', 'treat <uri> as a glob').conflicts('exact'),
    new Option('--exact', 'treat <uri> as one exact path even if it holds * ? [ or {').conflicts('glob'),
  ];
}

/**
 * The location a command reads. A uri with glob characters and neither --glob nor --exact is refused: a
 * glob typed without --glob would name one file called `**`, which does not exist, and come back as a
 * confident "not written". A uri without its leading `/` is rooted, so records about one file agree.
 */
export function readLocator(uri: string, options: Record<string, unknown>): SurfaceScorable {
  const match = options.glob === true ? 'glob' : 'exact';
  if (match === 'exact' && options.exact !== true && GLOB_CHARACTERS.test(uri)) {
    throw new UsageError(
      `${JSON.stringify(uri)} holds glob characters (* ? [ {) but --glob was not given: add --glob to match files by pattern, or --exact if the name really holds them`,
    );
  }
  return surface(uri.startsWith('/') ? uri : `/${uri}`, match);
}

/** A flag's value as a positive whole number, or a usage error naming the flag. */
export function readPositiveInt(flag: string, raw: unknown): number {
  const text = String(raw);
  if (!/^[1-9][0-9]*$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw new UsageError(`${flag} takes a positive whole number, got ${JSON.stringify(text)}`);
  }
  return Number(text);
}
