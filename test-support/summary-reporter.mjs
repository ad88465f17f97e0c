// Ends a `node --test` run with the plain line CI reads: "N passed, N failed, N skipped".
// Suites are not counted, except a suite that failed on its own (its body or one of its hooks threw, not
// a test inside it): one failure. So a test file that cannot be loaded counts as one failure, whether it
// runs in a process of its own or inside a shard of the fast lane (test-support/run-tests.mjs).
export default async function* summaryReporter(source) {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    if (event.data.details?.type === 'suite') {
      if (event.type === 'test:fail' && event.data.details.error?.failureType !== 'subtestsFailed') failed++;
      continue;
    }
    if (event.data.skip !== undefined || event.data.todo !== undefined) skipped++;
    else if (event.type === 'test:pass') passed++;
    else failed++;
  }
  yield `\n${passed} passed, ${failed} failed, ${skipped} skipped\n`;
}
