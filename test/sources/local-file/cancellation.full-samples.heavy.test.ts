/**
 * Cancellation at its full scale (1,000 cancelled acquisitions in one process): `npm test` runs the same
 * file with 125 (test/support/sample-size.ts).
 */
process.env.WITNESS_TEST_FULL_SAMPLES = '1';
await import('./cancellation.test.js');
