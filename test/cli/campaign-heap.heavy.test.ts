import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { CAMPAIGN_HEAP_GROWING_PERCENT } from '../../src/cli/campaign-heap.js';

const run = promisify(execFile);
const MODULE = fileURLToPath(new URL('../../src/cli/campaign-heap.js', import.meta.url));

/**
 * A campaign-shaped workload in a child process (V8 flags are process-wide): a flat live set of 100,000
 * objects and a stream of batches of 2,000 objects that each live for 200 rounds (long enough to be
 * promoted) and are then dropped, so V8 runs full collections and sets a new old-generation limit after
 * each. Prints what tuneHeapForCampaign returned.
 */
const WORKLOAD = `
const { tuneHeapForCampaign } = await import(${JSON.stringify(MODULE)});
const applied = process.argv[1] === 'tune' ? tuneHeapForCampaign(process.execArgv) : null;
const live = Array.from({ length: 100_000 }, (_, i) => ({ i, s: 'live-' + i }));
const ring = [];
for (let round = 0; round < 1500; round++) {
  ring.push(Array.from({ length: 2000 }, (_, i) => ({ round, i, s: 'g-' + round + '-' + i })));
  if (ring.length > 200) ring.shift();
}
console.log(JSON.stringify({ applied, live: live.length }));
`;

/**
 * Runs the workload under `--trace-gc-verbose` and returns the growing factors V8 applied to the old
 * generation's limit after each full collection, as its heap controller prints them. Node 20's V8 prints
 * the applied factor at the end of each `Limit:` line (`new limit: 77215 KB (1.3)`); Node 24's prints it
 * in the `factor 1.3 based on …` line and no longer in `Limit:`.
 *
 * Why the factor and not the heap's size: whether garbage piles up under V8's default depends on how fast
 * the collector runs against the program, so on a loaded machine (and on Node 24, which adapts more) the
 * default sometimes stays as small as the tuned heap; the factor V8 applied is what the flag sets, and it
 * is printed the same whatever the load. The memory this saves is measured by bench row 8b.
 */
async function appliedFactors(mode: 'tune' | 'default', nodeFlags: string[] = []) {
  const { stdout } = await run(
    process.execPath,
    [...nodeFlags, '--trace-gc-verbose', '--input-type=module', '-e', WORKLOAD, mode],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  const lines = stdout.split('\n');
  const fromLimits = lines.flatMap((line) => {
    const found = /\[HeapController\] Limit: .*\(([\d.]+)\)\s*$/.exec(line);
    return found ? [Number(found[1])] : [];
  });
  const fromFactors = lines.flatMap((line) => {
    const found = /\[HeapController\] factor ([\d.]+) based on/.exec(line);
    return found ? [Number(found[1])] : [];
  });
  const result = JSON.parse(lines.filter((line) => line.startsWith('{')).at(-1) ?? '{}') as {
    applied: boolean | null;
  };
  return { applied: result.applied, factors: fromLimits.length > 0 ? fromLimits : fromFactors };
}

describe('tuneHeapForCampaign (witness run sizes its own heap)', () => {
  it('set at run time, V8 applies the campaign growing factor after every full collection on this Node', async () => {
    const tuned = await appliedFactors('tune');
    assert.equal(tuned.applied, true);
    assert.ok(tuned.factors.length > 0, 'the workload ran no full collection: nothing to check');
    const expected = 1 + CAMPAIGN_HEAP_GROWING_PERCENT / 100;
    assert.deepEqual(
      [...new Set(tuned.factors)],
      [expected],
      `factors applied: ${tuned.factors.join(', ')} (--heap-growing-percent=${CAMPAIGN_HEAP_GROWING_PERCENT})`,
    );
  });

  it('leaves a --heap-growing-percent the user gave node alone (control: V8 applies the user’s factor)', async () => {
    // 300 % is a factor of 4.0: the parse above sees the factor the flag sets, whichever flag it is.
    const chosen = await appliedFactors('tune', ['--heap-growing-percent=300']);
    assert.equal(chosen.applied, false);
    assert.ok(chosen.factors.length > 0, 'the workload ran no full collection: nothing to check');
    assert.deepEqual([...new Set(chosen.factors)], [4]);
  });
});
