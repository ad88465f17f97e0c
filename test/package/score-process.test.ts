import { describeScoreProcess, FAST_CASES } from './score-process-cases.js';

/** A verdict and a usage error; the other command lines: score-process.heavy.test.ts. */
describeScoreProcess('the bundled witness score prints what the command tree prints', (name) =>
  FAST_CASES.includes(name),
);
