/** A mistake in how the command was called (bad flag, bad value, bad input file): exit status 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
