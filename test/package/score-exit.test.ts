import { describeScoreExit, FAST_CASES } from './score-exit-cases.js';

/** A verdict, an output larger than the pipe, and the control; the other cases: score-exit.heavy.test.ts. */
describeScoreExit('the bundled witness score ends at once when it is done', (name) =>
  FAST_CASES.includes(name),
);
