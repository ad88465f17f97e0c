import { describeExamplePreflights } from './support/example-preflight.js';

// The library matrices (their bait check copies the template once per attack); the rest run in npm test.
describeExamplePreflights('large');
