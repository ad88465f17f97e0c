/**
 * The two-reader comparisons with every budget case on both seams, four runs each, and every cancellation
 * timing: `npm test` runs the same file with each case on one seam (test/support/sample-size.ts).
 */
process.env.WITNESS_TEST_FULL_SAMPLES = '1';
await import('./two-readers.test.js');
