import { describeScoreProcess, FAST_CASES } from './score-process-cases.js';

/** Every command line npm test does not run (score-process.test.ts), a bundled process each. */
describeScoreProcess(
  'the bundled witness score prints what the command tree prints (every case)',
  (name) => !FAST_CASES.includes(name),
);
