import type { GapReason } from './vocabulary.js';

/**
 * The budgets of one acquisition (SPEC §5), said once. The library options (`resolveLimits`), the
 * campaign's `evidence:` keys and the CLI's `--max-*` flags with their help text are all derived from
 * {@link LIMIT_SPECS}, so a default or a maximum cannot disagree between them.
 *
 * Every limit has a documented maximum (docs/contract.md). Without one, `--max-content-bytes 9007199254740991`
 * made Witness try to keep a 3 GiB file as one string (6.3 GB resident, then a crash) and report a 1 GiB
 * file of NUL bytes "not UTF-8" because the string could not be built: a hostile file must meet a clear
 * refusal of the option, not a misleading verdict or an out-of-memory kill.
 */

/**
 * Bytes of a file that is not text kept as its prefix (SPEC §13): a 16 MB binary costs its length, its
 * digest and at most this much in the evidence, never its size (nor five times it, as JSON escapes).
 */
export const NON_TEXT_PREFIX_BYTES = 8192;

export const LIMIT_NAMES = ['maxFiles', 'maxContentBytes', 'maxReadBytes', 'maxListedEntries'] as const;
export type LimitName = (typeof LIMIT_NAMES)[number];

export interface LimitSpec {
  /** Value when the option is not given. */
  defaultValue: number;
  /** Largest accepted value. */
  maximum: number;
  /** What it bounds, with its unit (help text and docs). */
  bounds: string;
}

const MIB = 1024 * 1024;

export const LIMIT_SPECS: Readonly<Record<LimitName, LimitSpec>> = {
  maxFiles: { defaultValue: 1_000, maximum: 1_000_000, bounds: 'candidate files per acquisition' },
  maxContentBytes: {
    defaultValue: 1_000_000,
    // V8 strings and JSON records of this size stay far below the engine's string limit (~512 MiB).
    maximum: 64 * MIB,
    bounds: 'bytes of text retained per file',
  },
  maxReadBytes: {
    defaultValue: 16_000_000,
    maximum: 1024 * MIB,
    bounds: 'bytes read and hashed per acquisition',
  },
  maxListedEntries: {
    defaultValue: 100_000,
    maximum: 10_000_000,
    bounds: 'directory entries examined per acquisition',
  },
};

export type SourceLimits = Record<LimitName, number>;

export const DEFAULT_LIMITS: Readonly<SourceLimits> = Object.freeze(
  Object.fromEntries(LIMIT_NAMES.map((name) => [name, LIMIT_SPECS[name].defaultValue])) as SourceLimits,
);

/** The problem with one limit's value, or undefined when it is accepted. */
export function limitProblem(name: LimitName, value: unknown): string | undefined {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    return `${name} must be a positive integer`;
  }
  const { maximum } = LIMIT_SPECS[name];
  if (value > maximum)
    return `${name} must be a positive integer of at most ${maximum} (its documented maximum)`;
  return undefined;
}

/** The command-line flag of a limit: `maxContentBytes` → `--max-content-bytes`. */
export function limitFlag(name: LimitName): string {
  return `--${name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`;
}

/** Gaps that mean a budget ran out, and the budget to raise. */
export const LIMIT_OF_GAP: Readonly<Partial<Record<GapReason, LimitName>>> = {
  file_limit_exceeded: 'maxFiles',
  listing_limit_exceeded: 'maxListedEntries',
  read_limit_exceeded: 'maxReadBytes',
};

/** How to raise a limit, in every spelling a person may be using. */
export function howToRaise(name: LimitName): string {
  return `raise ${name} (evidence.${name} in a campaign, ${limitFlag(name)} on the command line)`;
}
