import { InvalidOptionError } from '../errors.js';

/**
 * Every default and every numeric check of the targets, in one place: the agent target, its planners and
 * toolboxes, and the command target all resolve their options here, so no combination skips a check
 * (the MCP-with-chat target once took `maxTurns` unchecked).
 */
export const TARGET_DEFAULTS = {
  /** Model calls per attempt of a chat planner. */
  maxTurns: 8,
  /** A chat endpoint request. */
  requestTimeoutMs: 60_000,
  maxRetries: 3,
  retryBaseDelayMs: 500,
  maxRetryDelayMs: 10_000,
  /** Bytes of a response body kept in the transcript. */
  maxRecordedBodyBytes: 65_536,
  /** Starting an MCP server, and each tool call. */
  mcpTimeoutMs: 30_000,
  /** A command agent's whole run. */
  commandTimeoutMs: 120_000,
  /** Bytes of a command agent's stdout kept as its reply. */
  maxOutputBytes: 1_000_000,
} as const;

/** A positive safe integer, or a typed error naming the option. */
export function positiveInteger(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new InvalidOptionError(`${name} must be a positive integer, got ${String(value)}`);
  }
  return value;
}

/** A non-negative safe integer, or a typed error naming the option. */
export function nonNegativeInteger(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new InvalidOptionError(`${name} must be a non-negative integer, got ${String(value)}`);
  }
  return value;
}

/** A non-empty string, or a typed error naming the option. */
export function nonEmptyString(name: string, value: unknown): string {
  if (typeof value !== 'string' || value === '') {
    throw new InvalidOptionError(`${name} must be a non-empty string`);
  }
  return value;
}
