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

/**
 * Whether this lane runs case `caseIndex` of a matrix on variant `variantIndex` of `variants` (the seams
 * a suite holds for each, say): in `npm test` each case runs on one variant, the variants taking the
 * cases in turn, so every case and every variant is still checked; the heavy lane's full-sample run
 * checks every case on every variant. A case left out is not registered at all (a skip would count).
 */
export function inRotation(caseIndex: number, variantIndex: number, variants: number): boolean {
  return fullSamples() || caseIndex % variants === variantIndex;
}

/** Repetitions of a timing-dependent check (cancel after 0, 1, 2… ms): the full count in the heavy lane. */
export function repetitions(full: number, fast: number): number {
  return fullSamples() ? full : fast;
}
