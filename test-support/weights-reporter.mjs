// Records how long each test file of the fast lane took (its suite in a shard, in seconds) as the JSON
// test-support/run-tests.mjs balances its shards with: `node test-support/run-tests.mjs fast
// --record-weights` rewrites test-support/fast-lane-weights.json. Only the balance depends on it.
export default async function* weightsReporter(source) {
  const weights = {};
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { name, nesting, details } = event.data;
    if (nesting === 0 && details?.type === 'suite' && /^test\/.*\.test\.ts$/.test(name)) {
      weights[name] = Math.round(details.duration_ms / 100) / 10;
    }
  }
  const sorted = Object.fromEntries(Object.entries(weights).sort(([a], [b]) => a.localeCompare(b)));
  yield `${JSON.stringify(sorted, null, 2)}\n`;
}
