/**
 * run-queries.test.ts at its full size (a few thousand stored attempts); `npm test` runs it with a few
 * hundred (test/support/sample-size.ts).
 */
process.env.WITNESS_TEST_FULL_SAMPLES = '1';
await import('./run-queries.test.js');
