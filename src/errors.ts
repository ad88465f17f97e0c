/**
 * Errors Witness throws. Verdicts are data: missing or partial evidence is an `undetermined` score, never
 * an exception. These classes are for misuse (invalid configuration or input) and for reading a boolean
 * that does not exist. Each has a stable `code` so callers never match on message text.
 */

export const ERROR_CODES = [
  'invalid_option',
  'invalid_locator',
  'invalid_matcher',
  'invalid_expectation',
  'invalid_scorable',
  'invalid_record',
  'location_mismatch',
  'memory_required',
  'undetermined_score',
  'not_found',
  'invalid_reference',
  'schema_too_new',
  'immutable_record',
  'invalid_campaign',
  'target_failed',
  'memory_unavailable',
  'sandbox_unavailable',
  'bundle_mismatch',
  'fail_on_matched',
  'program_not_found',
  'output_failed',
  'interrupted',
  'preflight_failed',
] as const;
export type WitnessErrorCode = (typeof ERROR_CODES)[number];

export class WitnessError extends Error {
  readonly code: WitnessErrorCode;
  constructor(code: WitnessErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'WitnessError';
    this.code = code;
  }
}

/** A constructor option or CLI limit is missing, of the wrong type or out of range. */
export class InvalidOptionError extends WitnessError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('invalid_option', message, options);
    this.name = 'InvalidOptionError';
  }
}

/** A locator uri cannot name a location inside a root (`..`, empty, the root itself, NUL, backslash, `!`). */
export class InvalidLocatorError extends WitnessError {
  constructor(message: string) {
    super('invalid_locator', message);
    this.name = 'InvalidLocatorError';
  }
}

/** A text matcher is malformed (for example a regex that does not compile). */
export class InvalidMatcherError extends WitnessError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('invalid_matcher', message, options);
    this.name = 'InvalidMatcherError';
  }
}

/** An expectation does not hold what a scorer can decide (for example no ContentWritten condition). */
export class InvalidExpectationError extends WitnessError {
  constructor(message: string) {
    super('invalid_expectation', message);
    this.name = 'InvalidExpectationError';
  }
}

/** A scorable is of a kind the scorer does not accept, or cannot be resolved. */
export class InvalidScorableError extends WitnessError {
  constructor(message: string) {
    super('invalid_scorable', message);
    this.name = 'InvalidScorableError';
  }
}

/** A record (JSON read from a file, a database or a caller) does not satisfy its schema. */
export class InvalidRecordError extends WitnessError {
  readonly issues: readonly string[];
  constructor(message: string, issues: readonly string[] = []) {
    super('invalid_record', message);
    this.name = 'InvalidRecordError';
    this.issues = issues;
  }
}

/** A scorable, condition and observation do not all name the same location. */
export class LocationMismatchError extends WitnessError {
  constructor(message: string) {
    super('location_mismatch', message);
    this.name = 'LocationMismatchError';
  }
}

/** A message scorable was given to a scorer that has no memory to resolve it from. */
export class MemoryRequiredError extends WitnessError {
  constructor(message: string) {
    super('memory_required', message);
    this.name = 'MemoryRequiredError';
  }
}

/** The boolean of an undetermined score was read: there is none. */
export class UndeterminedScoreError extends WitnessError {
  constructor(message: string) {
    super('undetermined_score', message);
    this.name = 'UndeterminedScoreError';
  }
}

/** A record the memory was asked about (a message piece, an observation, a score) is not stored. */
export class NotFoundError extends WitnessError {
  constructor(message: string) {
    super('not_found', message);
    this.name = 'NotFoundError';
  }
}

/**
 * Records refer to each other in a way the memory cannot accept: pieces that do not form one stored
 * message, a score naming an observation that is not stored, an attack result whose outcome contradicts
 * its score.
 */
export class InvalidReferenceError extends WitnessError {
  constructor(message: string) {
    super('invalid_reference', message);
    this.name = 'InvalidReferenceError';
  }
}

/** The database was written by a newer Witness (a higher memory schema version); it is left untouched. */
export class SchemaTooNewError extends WitnessError {
  readonly foundVersion: number;
  readonly supportedVersion: number;
  constructor(message: string, foundVersion: number, supportedVersion: number) {
    super('schema_too_new', message);
    this.name = 'SchemaTooNewError';
    this.foundVersion = foundVersion;
    this.supportedVersion = supportedVersion;
  }
}

/** A stored record cannot change: a different record under an existing id, or an update or delete. */
export class ImmutableRecordError extends WitnessError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('immutable_record', message, options);
    this.name = 'ImmutableRecordError';
  }
}

/** The database cannot be opened or reached (a missing directory, a refused connection). */
export class MemoryUnavailableError extends WitnessError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('memory_unavailable', message, options);
    this.name = 'MemoryUnavailableError';
  }
}

/**
 * A reader asked for a memory that does not exist (a missing SQLite file, a database Witness never
 * opened): nothing was created. Thrown by `openMemory(target, { mustExist: true })`.
 */
export class NoMemoryError extends MemoryUnavailableError {
  readonly target: string;
  constructor(target: string) {
    super(`no memory at ${target}`);
    this.name = 'NoMemoryError';
    this.target = target;
  }
}

/** A campaign file is not valid YAML or does not satisfy the campaign schema; names file, line and column. */
export class InvalidCampaignError extends WitnessError {
  readonly issues: readonly string[];
  constructor(message: string, issues: readonly string[] = [], options?: { cause?: unknown }) {
    super('invalid_campaign', message, options);
    this.name = 'InvalidCampaignError';
    this.issues = issues;
  }
}

/**
 * A target could not produce a reply (process failed or timed out, endpoint unreachable, turn limit).
 * It carries what was recorded before the failure, so an `error` outcome still shows its transcript.
 */
export class TargetError extends WitnessError {
  readonly transcript: readonly unknown[];
  constructor(message: string, transcript: readonly unknown[] = [], options?: { cause?: unknown }) {
    super('target_failed', message, options);
    this.name = 'TargetError';
    this.transcript = transcript;
  }
}

/**
 * An out-of-process target was asked for but no sandbox can be had here (not Linux, no `bwrap` on PATH,
 * namespaces refused). The message names the fix: install bubblewrap, or say `sandbox: none` explicitly.
 */
export class SandboxUnavailableError extends WitnessError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('sandbox_unavailable', message, options);
    this.name = 'SandboxUnavailableError';
  }
}

/** A campaign file fetched from the queue does not hash to what its run's manifest says: the job is refused. */
export class BundleMismatchError extends WitnessError {
  constructor(message: string) {
    super('bundle_mismatch', message);
    this.name = 'BundleMismatchError';
  }
}

/**
 * A finished run in which some attempt ended with an outcome named by `--fail-on` (SPEC §10): the run's
 * results are stored and printed; this only decides the exit status (3) for a CI gate.
 */
export class FailOnMatchedError extends WitnessError {
  constructor(message: string) {
    super('fail_on_matched', message);
    this.name = 'FailOnMatchedError';
  }
}

/**
 * The program a command target, an agent preset or an MCP server names does not exist or is not an
 * executable file. The message names the program and where it was looked for (the PATH searched for a bare
 * name; the path itself for a path).
 */
export class ProgramNotFoundError extends WitnessError {
  readonly program: string;
  constructor(program: string, searchPath: string) {
    super(
      'program_not_found',
      program.includes('/')
        ? `${program}: no such executable program (check the path, or make the file executable: chmod +x)`
        : `${program}: no such executable program (searched PATH: ${searchPath}; install it, or give its path)`,
    );
    this.name = 'ProgramNotFoundError';
    this.program = program;
  }
}

/** A run finished, but an output file it was asked for (`--report`, `--junit`) could not be written. */
export class OutputFailedError extends WitnessError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('output_failed', message, options);
    this.name = 'OutputFailedError';
  }
}

/** A command was interrupted (Ctrl-C); the message says what it finished and where that is kept. */
export class InterruptedError extends WitnessError {
  constructor(message: string) {
    super('interrupted', message);
    this.name = 'InterruptedError';
  }
}

/**
 * The preflight found problems that would make every attempt of the campaign fail (a missing template or
 * program, a dead model endpoint): the campaign is refused before any attempt, with every problem and its
 * fix at once. `checks` holds every check made, passed ones included.
 */
export class PreflightFailedError extends WitnessError {
  readonly checks: readonly {
    check: string;
    status: string;
    subject: string;
    detail: string;
    fix?: string;
  }[];
  constructor(
    message: string,
    checks: readonly { check: string; status: string; subject: string; detail: string; fix?: string }[],
  ) {
    super('preflight_failed', message);
    this.name = 'PreflightFailedError';
    this.checks = checks;
  }
}

/** An error's message on one line, led by its code when the message lacks it (`ENOSPC: no space left…`). */
export function oneLineError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  const message = error.message.replace(/\s+/g, ' ').trim();
  return typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message;
}
