import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * The campaign's acquisition threads. How V8 grows the heap of `witness run` (two workloads under
 * --trace-gc-verbose, seconds of CPU each): campaign-heap.heavy.test.ts.
 */
// Through the public entry point (`witness/attacks`), as a library host that runs campaigns calls it.
const ATTACKS_ENTRY = fileURLToPath(new URL('../../src/entry/attacks.js', import.meta.url));
const POOL_MODULE = fileURLToPath(
  new URL('../../src/sources/local-file/acquisition-pool.js', import.meta.url),
);

/**
 * Starts one pool thread in a fresh process (the pool is process-wide), optionally after
 * tuneAcquisitionThreadsForCampaign, and prints the young generation the thread was started with.
 */
async function threadYoungGeneration(mode: 'tune' | 'default'): Promise<number[]> {
  const script = `
const { acquisitionPool } = await import(${JSON.stringify(POOL_MODULE)});
const { tuneAcquisitionThreadsForCampaign } = await import(${JSON.stringify(ATTACKS_ENTRY)});
if (process.argv[1] === 'tune') tuneAcquisitionThreadsForCampaign();
acquisitionPool.prewarm();
console.log(JSON.stringify(acquisitionPool.threadYoungGenerationsMb()));
`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script, mode]);
  return JSON.parse(stdout) as number[];
}

describe('tuneAcquisitionThreadsForCampaign', () => {
  it("starts a campaign's acquisition threads with the campaign's young generation, not the library's", async () => {
    const { CAMPAIGN_THREAD_YOUNG_GENERATION_MB, DEFAULT_THREAD_YOUNG_GENERATION_MB } = await import(
      '../../src/sources/local-file/acquisition-pool.js'
    );
    assert.notEqual(CAMPAIGN_THREAD_YOUNG_GENERATION_MB, DEFAULT_THREAD_YOUNG_GENERATION_MB);
    assert.deepEqual(await threadYoungGeneration('default'), [DEFAULT_THREAD_YOUNG_GENERATION_MB]);
    assert.deepEqual(await threadYoungGeneration('tune'), [CAMPAIGN_THREAD_YOUNG_GENERATION_MB]);
  });

  it('refuses a young generation that is not a whole number of MiB from 1 to 1024', async () => {
    const { acquisitionPool } = await import('../../src/sources/local-file/acquisition-pool.js');
    for (const bad of [0, -1, 1.5, 2048, Number.NaN]) {
      assert.throws(() => acquisitionPool.setThreadYoungGenerationMb(bad), RangeError);
    }
  });
});
