/**
 * modifiedAt against toISOString on its full sample of random times (two million): `npm test` runs the
 * same file with an eighth (test/support/sample-size.ts).
 */
process.env.WITNESS_TEST_FULL_SAMPLES = '1';
await import('./modified-at.test.js');
