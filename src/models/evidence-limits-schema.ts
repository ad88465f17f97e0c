import * as z from 'zod';
import { LIMIT_SPECS, type LimitName } from './evidence-limits.js';

/**
 * The campaign's `evidence:` object, derived from {@link LIMIT_SPECS}. A module of its own so that what
 * needs the limits alone (the source, the CLI's flags, the verdicts) does not construct it: `witness
 * score` loads no campaign schema, and every schema built at import is start-up time it pays.
 */

function limitSchema(name: LimitName) {
  const { maximum } = LIMIT_SPECS[name];
  return z
    .number()
    .int(`${name} must be a positive integer`)
    .positive(`${name} must be a positive integer`)
    .max(maximum, `${name} must be a positive integer of at most ${maximum} (its documented maximum)`);
}

/** The campaign's `evidence:` object (every key optional; unknown keys refused). */
export const EvidenceLimitsSchema = z.strictObject({
  maxFiles: limitSchema('maxFiles').optional(),
  maxContentBytes: limitSchema('maxContentBytes').optional(),
  maxReadBytes: limitSchema('maxReadBytes').optional(),
  maxListedEntries: limitSchema('maxListedEntries').optional(),
});
export type EvidenceLimits = z.infer<typeof EvidenceLimitsSchema>;
