/**
 * How many generated cases a property test checks. `npm test` checks an eighth of each sample: enough to
 * reach every branch its generator aims at (each such test asserts that it did, as it always has). The
 * heavy lane checks the whole sample: a `*.full-samples.heavy.test.ts` file sets WITNESS_TEST_FULL_SAMPLES
 * and imports the same test file again, so one definition runs at both sizes.
 */
export function sampleSize(full: number): number {
  return fullSamples() ? full : Math.ceil(full / 8);
}

/** True in the heavy lane's full-sample run, for a test whose sample is not a count (a search depth). */
export function fullSamples(): boolean {
  return process.env.WITNESS_TEST_FULL_SAMPLES === '1';
}
