/**
 * The property tests of the hand-written fast paths at their full size: `npm test` runs the same files
 * with an eighth of each sample (test/support/sample-size.ts). Importing a test file registers its tests
 * here, so the definitions are the same; the files' other tests run again with them.
 */
process.env.WITNESS_TEST_FULL_SAMPLES = '1';
await import('./observation-fast-path.test.js');
await import('./manifest-entry-fast-path.test.js');
await import('./surface-entry-fast-path.test.js');
await import('./locator.test.js');
