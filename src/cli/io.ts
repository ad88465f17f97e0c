/** Where a command writes: data to `out` (stdout), logs and progress to `err` (stderr). */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /**
   * Resolves once `out` has room again (its reader has taken what was written), so a command that writes
   * a lot (`witness export`) holds at most a buffer's worth; absent where `out` never fills (tests).
   */
  drain?(): Promise<void>;
  /** Aborted on SIGINT, so an interrupted command stops its I/O and closes what it opened. */
  signal: AbortSignal;
  /** The environment (WITNESS_DB; campaigns name API-key variables; command agents inherit it). */
  env: Readonly<Record<string, string | undefined>>;
  /** True when stderr is a terminal (progress is drawn as a bar rather than printed as lines). */
  errIsTTY?: boolean | undefined;
}

/** Prints a record as JSON exactly as its schema serializes it, one document per line. */
export function printJson(io: CliIo, value: unknown): void {
  io.out(`${JSON.stringify(value)}\n`);
}
