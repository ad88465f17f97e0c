import { InvalidOptionError } from '../../errors.js';
import {
  DEFAULT_LIMITS,
  LIMIT_NAMES,
  limitProblem,
  type SourceLimits,
} from '../../models/evidence-limits.js';

/** Budgets of one acquisition (SPEC §5), defined once in models/evidence-limits.ts. */
export { DEFAULT_LIMITS, LIMIT_NAMES, type SourceLimits };

/** Source options that are not budgets (checked by the source itself). */
const OTHER_OPTIONS: readonly string[] = ['root', 'surfaceFs'];

/** Fills defaults and checks each limit (a whole number from 1 to its maximum); the error names it. */
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
    const problem = limitProblem(name, value);
    if (problem !== undefined) {
      throw new InvalidOptionError(
        `${problem}, got ${typeof value === 'number' ? String(value) : (JSON.stringify(value) ?? String(value))}`,
      );
    }
    limits[name] = value as number;
  }
  return limits;
}
