import { CommanderError } from 'commander';
import { WitnessError, type WitnessErrorCode } from '../errors.js';
import { neutralizeText } from '../text/quote-text.js';
import { UsageError } from './usage-error.js';

/**
 * Exit statuses, decided in one place: 0 when a verdict (any) or the requested output was produced;
 * 2 for usage errors and invalid input; 3 when `--fail-on` matched an attempt; 1 for unexpected failures;
 * 130 when interrupted.
 */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;
/** `witness run --fail-on …`: the run finished and some attempt ended with a named outcome. */
export const EXIT_FAIL_ON = 3;
export const EXIT_INTERRUPTED = 130;

/**
 * The exit status of each library error. Typed as a full record, so a new error code does not compile
 * until someone decides whether it is the caller's mistake (2) or a failure (1).
 */
const EXIT_BY_CODE: Readonly<Record<WitnessErrorCode, number>> = {
  invalid_option: EXIT_USAGE,
  invalid_locator: EXIT_USAGE,
  invalid_matcher: EXIT_USAGE,
  invalid_expectation: EXIT_USAGE,
  invalid_scorable: EXIT_USAGE,
  invalid_record: EXIT_USAGE,
  location_mismatch: EXIT_USAGE,
  memory_required: EXIT_USAGE,
  not_found: EXIT_USAGE,
  invalid_reference: EXIT_USAGE,
  schema_too_new: EXIT_USAGE,
  immutable_record: EXIT_USAGE,
  invalid_campaign: EXIT_USAGE,
  memory_unavailable: EXIT_USAGE,
  sandbox_unavailable: EXIT_USAGE,
  program_not_found: EXIT_USAGE,
  preflight_failed: EXIT_USAGE,
  output_failed: EXIT_FAILURE,
  interrupted: EXIT_INTERRUPTED,
  undetermined_score: EXIT_FAILURE,
  target_failed: EXIT_FAILURE,
  bundle_mismatch: EXIT_FAILURE,
  fail_on_matched: EXIT_FAIL_ON,
};

/** Failures (exit 1) that are no bug: their message says everything, so no stack is printed. */
const TOLD: ReadonlySet<WitnessErrorCode> = new Set(['output_failed']);

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
  if (interrupted) {
    // A command that says what it finished before the interruption (witness run) says it in its error.
    const said = error instanceof WitnessError && error.code === 'interrupted';
    return {
      status: EXIT_INTERRUPTED,
      message: said ? `witness: ${safe(error.message)}` : 'witness: interrupted; nothing further was read',
    };
  }
  if (error instanceof UsageError) return { status: EXIT_USAGE, message: `witness: ${safe(error.message)}` };
  // A failure the user is told about in words (not a bug): no stack.
  if (error instanceof WitnessError && (EXIT_BY_CODE[error.code] !== EXIT_FAILURE || TOLD.has(error.code))) {
    return { status: EXIT_BY_CODE[error.code], message: `witness: ${safe(error.message)}` };
  }
  const detail = error instanceof Error ? describeError(error) : String(error);
  return { status: EXIT_FAILURE, message: `witness: unexpected failure: ${safe(detail)}` };
}

/**
 * Error messages embed file names and replies an agent chose (Node's `ENOENT: …, open '<name>'` among
 * them): printed as they are, `ESC]0;…BEL ESC[2J` in a name would retitle and clear the terminal. Line
 * breaks are kept (a stack, a list of campaign problems); every other control is shown escaped.
 */
function safe(message: string): string {
  return neutralizeText(message, { multiline: true, maxChars: 20_000 });
}

/** The stack (or message) of an error and of each cause, so "fetch failed" keeps its ECONNREFUSED. */
function describeError(error: Error): string {
  const parts = [error.stack ?? error.message];
  let cause: unknown = error.cause;
  for (let depth = 0; cause !== undefined && depth < 5; depth++) {
    parts.push(`caused by: ${cause instanceof Error ? (cause.stack ?? cause.message) : String(cause)}`);
    cause = cause instanceof Error ? cause.cause : undefined;
  }
  return parts.join('\n');
}
