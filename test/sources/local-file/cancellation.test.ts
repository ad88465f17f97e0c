import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { acquireSync } from '../../../src/sources/local-file/acquire-sync.js';
import { DEFAULT_LIMITS } from '../../../src/sources/local-file/limits.js';
import { LocalFileSurfaceSource } from '../../../src/sources/local-file-source.js';
import { sampleSize } from '../../support/sample-size.js';
import { runNode, writeChildScript } from '../support/child-process.js';
import { recordingFs } from '../support/recording-fs.js';
import { describeEachSurfaceFs } from '../support/surface-fs-variants.js';
import { buildTree, openFdCount, removeDir, tempDir } from '../support/trees.js';

/**
 * Cancellation (SPEC §5.1): the flag is honoured at every directory entry and read chunk, and — through
 * the cancellable seam — before every other I/O call too. Proven here by cancelling at every single call
 * of a real acquisition and counting, through the seam, what happened afterwards.
 */

const surface = (uri: string, match: 'exact' | 'glob' = 'exact') =>
  ({ scorableType: 'surface', uri, match }) as const;

describeEachSurfaceFs('cancellation through the seam', (variant) => {
  let dir: string;
  before(() => {
    dir = tempDir();
    buildTree(dir, {
      a: { dir: { 'one.txt': 'one', 'two.txt': 'x'.repeat(3000), deep: { dir: { 'three.txt': '3' } } } },
      b: { dir: { 'four.txt': 'four' } },
      link: { symlink: 'a' },
    });
  });
  after(() => removeDir(dir));

  for (const [uri, match] of [
    ['/a/deep/three.txt', 'exact'],
    ['/**', 'glob'],
    ['/a/*.txt', 'glob'],
  ] as const) {
    it(`stops all I/O at once and closes every handle, whichever call it lands on (${uri})`, () => {
      const request = { root: dir, uri, match, limits: { ...DEFAULT_LIMITS, maxReadBytes: 2048 } };
      const full = recordingFs({}, variant.fs);
      assert.equal(acquireSync(request, full.fs, () => false).kind, 'done');
      const total = full.recording.calls.filter((call) => call.op !== 'close').length;
      assert.ok(total > 5, `the uncancelled acquisition made ${total} calls`);
      // The flag is raised while call number `cancelAt` runs (as an abort from another thread would be);
      // that call completes, and nothing but closing handles may follow it.
      for (let cancelAt = 0; cancelAt < total; cancelAt++) {
        let flagged = false;
        let calls = 0;
        const { fs: seam, recording } = recordingFs(
          {
            before: (op) => {
              if (op !== 'close' && calls++ === cancelAt) flagged = true;
            },
          },
          variant.fs,
        );
        const outcome = acquireSync(request, seam, () => flagged);
        if (cancelAt < total - 1) assert.equal(outcome.kind, 'cancelled', `cancelled at call ${cancelAt}`);
        const raisedAt = recording.calls.findIndex(
          (_call, i) => countNonClose(recording.calls, i) > cancelAt,
        );
        const afterFlag = recording.calls.slice(raisedAt + 1);
        assert.ok(
          afterFlag.every((call) => call.op === 'close'),
          `I/O after cancellation at call ${cancelAt}: ${JSON.stringify(afterFlag)}`,
        );
        assert.deepEqual([...recording.openFds], [], `handles left open at call ${cancelAt}`);
      }
    });
  }
});

function countNonClose(calls: readonly { op: string }[], index: number): number {
  let count = 0;
  for (let i = 0; i <= index; i++) if (calls[i]?.op !== 'close') count++;
  return count;
}

describeEachSurfaceFs('cancellation through an AbortSignal', (variant) => {
  let dir: string;
  let root: string;
  let source: LocalFileSurfaceSource;
  before(() => {
    dir = tempDir();
    root = path.join(dir, 'ws');
    fs.mkdirSync(root);
    buildTree(root, { small: { dir: { 'a.txt': 'a', 'b.txt': 'b' } } });
    // A sparse 1 GiB file (maxReadBytes' documented maximum): reading and hashing it all takes far longer
    // than the 100 ms before the abort, so the abort lands mid-read (a finished read would resolve instead).
    const big = fs.openSync(path.join(root, 'big.bin'), 'w');
    fs.ftruncateSync(big, 1024 ** 3);
    fs.closeSync(big);
    source = new LocalFileSurfaceSource({ root, maxReadBytes: 1024 ** 3, surfaceFs: variant.name });
  });
  after(async () => {
    await source.close();
    removeDir(dir);
  });

  it('rejects with the signal’s reason mid-read, promptly, and leaves no handle open', async () => {
    await source.acquire(surface('/small/a.txt')); // the worker exists before fds are counted
    const fdsBefore = openFdCount();
    const controller = new AbortController();
    const reason = new Error('operator stopped the run');
    const started = performance.now();
    setTimeout(() => controller.abort(reason), 100);
    await assert.rejects(source.acquire(surface('/big.bin'), { signal: controller.signal }), (error) => {
      assert.equal(error, reason);
      return true;
    });
    const elapsedMs = performance.now() - started;
    // Stopping at the next 1 MiB chunk takes milliseconds; the bound is generous for a loaded machine.
    assert.ok(elapsedMs < 5000, `rejected after ${elapsedMs} ms; the read did not stop at the next chunk`);
    assert.equal(openFdCount(), fdsBefore);
    // The worker is free again: the next acquisition runs normally.
    const next = await source.acquire(surface('/small/*.txt', 'glob'));
    assert.equal(next.payload.entries.length, 2);
  });

  it('rejects at once with the reason of a signal that is already aborted', async () => {
    const reason = { why: 'already aborted' };
    await assert.rejects(
      source.acquire(surface('/small/a.txt'), { signal: AbortSignal.abort(reason) }),
      (error) => error === reason,
    );
  });

  it('rejects with the reason when aborted mid-walk', async () => {
    const controller = new AbortController();
    const pending = source.acquire(surface('/**', 'glob'), { signal: controller.signal });
    controller.abort('stop');
    await assert.rejects(pending, (error) => error === 'stop');
  });
});

const CANCEL_LOOP = `
import fs from 'node:fs';
import { LocalFileSurfaceSource } from '{{SOURCE}}';
const [root, count] = [process.argv[2], Number(process.argv[3])];
const source = new LocalFileSurfaceSource({ root });
const fdCount = () => fs.readdirSync('/proc/self/fd').length;
await source.acquire({ scorableType: 'surface', uri: '/**', match: 'glob' });
const fdsBefore = fdCount();
const reason = new Error('cancelled');
let rejected = 0;
let resolved = 0;
let wrongReason = 0;
for (let i = 0; i < count; i++) {
  const controller = new AbortController();
  if (i % 4 === 0) controller.abort(reason);
  const pending = source.acquire({ scorableType: 'surface', uri: '/**', match: 'glob' }, { signal: controller.signal });
  if (i % 4 === 1) controller.abort(reason);
  else if (i % 4 === 2) queueMicrotask(() => controller.abort(reason));
  else if (i % 4 === 3) setImmediate(() => controller.abort(reason));
  try {
    await pending;
    resolved++;
  } catch (error) {
    if (error === reason) rejected++;
    else wrongReason++;
  }
}
process.stdout.write(JSON.stringify({ rejected, resolved, wrongReason, fdsBefore, fdsAfter: fdCount() }));
`;

describe('cancellation at scale', () => {
  let dir: string;
  before(() => {
    dir = tempDir();
    const tree: Record<string, { dir: Record<string, string> }> = {};
    for (let d = 0; d < 10; d++) {
      const files: Record<string, string> = {};
      for (let f = 0; f < 20; f++) files[`f${f}.txt`] = `file ${d}/${f}`;
      tree[`d${d}`] = { dir: files };
    }
    buildTree(dir, tree);
  });
  after(() => removeDir(dir));

  // 1,000 in the heavy lane (cancellation.full-samples.heavy.test.ts), 125 in npm test: one leaked
  // handle per cancellation, or a worker left alive, shows in either.
  const cancellations = sampleSize(1_000);
  it(`survives ${cancellations.toLocaleString('en')} cancelled acquisitions with no fd leak, and no worker keeps the process alive`, async () => {
    const script = writeChildScript(dir, 'cancel-loop.mjs', CANCEL_LOOP);
    const result = await runNode(script, [dir, String(cancellations)], { timeoutMs: 60_000 });
    assert.equal(result.signal, null, `the child did not exit on its own: ${result.stderr}`);
    assert.equal(result.code, 0, result.stderr);
    const counts = JSON.parse(result.stdout) as Record<string, number>;
    console.log(
      `${cancellations} cancelled acquisitions: ${JSON.stringify(counts)} in ${Math.round(result.elapsedMs)} ms`,
    );
    assert.equal(counts.wrongReason, 0);
    assert.equal((counts.rejected ?? 0) + (counts.resolved ?? 0), cancellations);
    // Aborted before or right after the call, the acquisition cannot have finished: at least half reject.
    assert.ok((counts.rejected ?? 0) >= cancellations / 2, `only ${counts.rejected} rejected`);
    assert.equal(counts.fdsAfter, counts.fdsBefore);
  });
});
