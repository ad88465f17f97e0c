/**
 * The bad-input fuzzing of locators, glob segments, matcher options and observation JSON on its full
 * samples: `npm test` runs the same file with an eighth (test/support/sample-size.ts).
 */
process.env.WITNESS_TEST_FULL_SAMPLES = '1';
await import('./fuzz.test.js');
