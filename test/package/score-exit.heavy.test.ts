import { describeScoreExit, FAST_CASES } from './score-exit-cases.js';

/** Every case npm test does not run (score-exit.test.ts), a bundled process each. */
describeScoreExit(
  'the bundled witness score ends at once when it is done (every case)',
  (name) => !FAST_CASES.includes(name),
);
