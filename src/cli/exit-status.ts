import { CommanderError } from 'commander';
import { WitnessError } from '../errors.js';
import { UsageError } from './usage-error.js';

/**
 * Exit statuses, decided in one place: 0 when a verdict (any) or the requested output was produced;
 * 2 for usage errors and invalid input; 1 for unexpected failures; 130 when interrupted.
 */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;
export const EXIT_INTERRUPTED = 130;

const INPUT_ERROR_CODES = new Set<string>([
  'invalid_option',
  'invalid_locator',
  'invalid_matcher',
  'invalid_expectation',
  'invalid_scorable',
  'invalid_record',
  'location_mismatch',
  'memory_required',
  'not_found',
  'invalid_reference',
  'schema_too_new',
  'immutable_record',
  'invalid_campaign',
  'memory_unavailable',
]);

export interface Failure {
  status: number;
  /** What to print on stderr; undefined when commander already printed it. */
  message?: string;
}

export function classifyFailure(error: unknown, interrupted: boolean): Failure {
  if (error instanceof CommanderError) {
    // `commander.help` with a non-zero exit code is help shown for a missing (sub)command: a usage error.
    const ok =
      error.code === 'commander.helpDisplayed' ||
      error.code === 'commander.version' ||
      (error.code === 'commander.help' && error.exitCode === 0);
    return { status: ok ? EXIT_OK : EXIT_USAGE };
  }
  if (interrupted)
    return { status: EXIT_INTERRUPTED, message: 'witness: interrupted; nothing further was read' };
  if (error instanceof UsageError) return { status: EXIT_USAGE, message: `witness: ${error.message}` };
  if (error instanceof WitnessError && INPUT_ERROR_CODES.has(error.code)) {
    return { status: EXIT_USAGE, message: `witness: ${error.message}` };
  }
  const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
  return { status: EXIT_FAILURE, message: `witness: unexpected failure: ${detail}` };
}
