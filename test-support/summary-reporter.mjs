// Counts a `node --test` run for the closing summary of test-support/run-tests.mjs: tests passed, failed
// and skipped, and why each skipped one was skipped. The runner passes a file in WITNESS_TEST_RESULTS and
// prints the summary itself (test-support/closing-summary.mjs), after its own checks of the run; used
// without that variable (`node --test --test-reporter=./test-support/summary-reporter.mjs`), this prints
// the plain line "N passed, N failed, N skipped" itself.
//
// - Suites are not counted, except a suite that failed on its own (its body or one of its hooks threw, not
//   a test inside it): one failure. So a test file that cannot be loaded counts as one failure, whether it
//   runs in a process of its own or inside a shard of the fast lane.
// - A skipped suite counts as one skipped test: node does not run a skipped suite's body, so the tests in
//   it are never reported one by one.
import { writeFileSync } from 'node:fs';

export default async function* summaryReporter(source) {
  let passed = 0;
  let failed = 0;
  /** reason → how many tests (or whole suites) were skipped for it */
  const skipped = {};
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { details, skip, todo } = event.data;
    const isSuite = details?.type === 'suite';
    if (skip !== undefined || todo !== undefined) {
      const reason =
        typeof (skip ?? todo) === 'string' && (skip ?? todo) !== '' ? (skip ?? todo) : 'no reason given';
      skipped[reason] = (skipped[reason] ?? 0) + 1;
    } else if (isSuite) {
      if (event.type === 'test:fail' && details.error?.failureType !== 'subtestsFailed') failed++;
    } else if (event.type === 'test:pass') passed++;
    else failed++;
  }
  const results = { passed, failed, skipped };
  const file = process.env.WITNESS_TEST_RESULTS;
  if (file !== undefined && file !== '') writeFileSync(file, JSON.stringify(results));
  else {
    const total = Object.values(skipped).reduce((sum, count) => sum + count, 0);
    yield `\n${passed} passed, ${failed} failed, ${total} skipped\n`;
  }
}
