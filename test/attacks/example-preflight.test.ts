import { describeExamplePreflights } from './support/example-preflight.js';

// The examples of a few attacks; the library matrices are in example-preflight.heavy.test.ts.
describeExamplePreflights('small');
