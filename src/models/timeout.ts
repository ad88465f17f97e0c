import * as z from 'zod';
import { InvalidOptionError } from '../errors.js';

/**
 * Every timeout is an integer number of milliseconds from 1 to 2^31−1 (SPEC §11): Node's timers clamp a
 * larger delay to 1 ms (so `timeoutMs: 2147483648` killed every agent at once) and `AbortSignal.timeout`
 * throws on 2^32 and above (which crashed a run). One schema for campaign keys and options alike.
 */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

export const TimeoutMsSchema = z
  .number()
  .int('must be a whole number of milliseconds')
  .min(1, 'must be at least 1 ms')
  .max(MAX_TIMEOUT_MS, `must be at most ${MAX_TIMEOUT_MS} ms (about 24.8 days)`);

/** Validates a timeout option, naming it in the error. */
export function checkTimeoutMs(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_TIMEOUT_MS) {
    throw new InvalidOptionError(
      `${name} must be a whole number of milliseconds from 1 to ${MAX_TIMEOUT_MS}, got ${String(value)}`,
    );
  }
  return value;
}
