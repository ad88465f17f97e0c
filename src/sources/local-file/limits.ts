import { InvalidOptionError } from '../../errors.js';

/** Budgets of one acquisition (SPEC §5). Every loop over workspace input is bounded by one of them. */
export interface SourceLimits {
  /** Candidate files per acquisition; candidate number maxFiles+1 stops enumeration. */
  maxFiles: number;
  /** Text retained per file, in bytes. */
  maxContentBytes: number;
  /** Bytes read and hashed per acquisition, shared across files. */
  maxReadBytes: number;
  /** Directory entries examined per acquisition. */
  maxListedEntries: number;
}

export const DEFAULT_LIMITS: Readonly<SourceLimits> = Object.freeze({
  maxFiles: 1_000,
  maxContentBytes: 1_000_000,
  maxReadBytes: 16_000_000,
  maxListedEntries: 100_000,
});

export const LIMIT_NAMES = ['maxFiles', 'maxContentBytes', 'maxReadBytes', 'maxListedEntries'] as const;

/** Source options that are not budgets (checked by the source itself). */
const OTHER_OPTIONS: readonly string[] = ['root', 'surfaceFs'];

/** Fills defaults and checks each limit is a positive safe integer; the error names the option. */
export function resolveLimits(options: Partial<Record<keyof SourceLimits, unknown>>): SourceLimits {
  for (const key of Object.keys(options)) {
    if (OTHER_OPTIONS.includes(key) || (LIMIT_NAMES as readonly string[]).includes(key)) continue;
    const near = [...LIMIT_NAMES, ...OTHER_OPTIONS].find((name) => name.toLowerCase() === key.toLowerCase());
    throw new InvalidOptionError(
      `unknown option ${JSON.stringify(key)}${near === undefined ? '' : `; did you mean ${near}?`} (options: root, ${LIMIT_NAMES.join(', ')}, surfaceFs)`,
    );
  }
  const limits = { ...DEFAULT_LIMITS };
  for (const name of LIMIT_NAMES) {
    const value = options[name];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
      throw new InvalidOptionError(
        `${name} must be a positive integer, got ${typeof value === 'number' ? String(value) : (JSON.stringify(value) ?? String(value))}`,
      );
    }
    limits[name] = value;
  }
  return limits;
}
