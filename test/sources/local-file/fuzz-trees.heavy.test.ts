import { describeRandomTreeFuzz } from '../support/random-tree-fuzz.js';

/** The random-tree fuzzer at full length (a sample of it runs in `npm test`: fuzz.test.ts). */
describeRandomTreeFuzz({ numRuns: 150 });
