/**
 * The getdents64 listing with its full sample (a directory of 20,000 entries): `npm test` runs the same
 * file with an eighth (test/support/sample-size.ts).
 */
process.env.WITNESS_TEST_FULL_SAMPLES = '1';
await import('./getdents-listing.test.js');
