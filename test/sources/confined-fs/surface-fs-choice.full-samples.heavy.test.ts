/**
 * The seam choice with its full sample: 20,000 openat2 calls while another process renames across
 * directories (EAGAIN retried every time). `npm test` runs the same file with an eighth
 * (test/support/sample-size.ts).
 */
process.env.WITNESS_TEST_FULL_SAMPLES = '1';
await import('./surface-fs-choice.test.js');
