// Ends a `node --test` run with the plain line CI reads: "N passed, N failed, N skipped".
// Suites are not counted; a test file that crashes counts as one failure.
export default async function* summaryReporter(source) {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    if (event.data.details?.type === 'suite') continue;
    if (event.data.skip !== undefined || event.data.todo !== undefined) skipped++;
    else if (event.type === 'test:pass') passed++;
    else failed++;
  }
  yield `\n${passed} passed, ${failed} failed, ${skipped} skipped\n`;
}
