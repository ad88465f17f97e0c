import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LocalFileSurfaceSource } from '../../src/sources/local-file-source.js';
import { removeDir, tempDir } from './support/trees.js';

/**
 * The source reads and hashes in a worker thread: a gigabyte-sized acquisition leaves the caller's event
 * loop free. Heavy lane: seconds of hashing, and a lag measured on the clock (with loaded-machine room).
 */

describe('LocalFileSurfaceSource worker: a large acquisition', () => {
  let dir: string;
  before(() => {
    dir = tempDir();
  });
  after(() => removeDir(dir));

  it('keeps the main thread responsive while a large acquisition runs', async () => {
    const root = path.join(dir, 'big');
    fs.mkdirSync(root);
    const fd = fs.openSync(path.join(root, 'big.bin'), 'w');
    fs.ftruncateSync(fd, 1024 ** 3);
    fs.closeSync(fd);
    const source = new LocalFileSurfaceSource({ root, maxReadBytes: 1024 ** 3 });
    let maxLagMs = 0;
    let ticks = 0;
    let last = performance.now();
    const timer = setInterval(() => {
      const now = performance.now();
      maxLagMs = Math.max(maxLagMs, now - last - 5);
      last = now;
      ticks++;
    }, 5);
    const started = performance.now();
    try {
      const observation = await source.acquire({ scorableType: 'surface', uri: '/big.bin', match: 'exact' });
      assert.equal(observation.payload.entries[0]?.sizeBytes, 1024 ** 3);
    } finally {
      clearInterval(timer);
      await source.close();
    }
    const elapsedMs = performance.now() - started;
    // Hashing a gigabyte takes seconds; on the main thread it would stall the timer for all of them. The
    // bounds leave room for a loaded CI machine (other test files race a C attacker on the same cores).
    assert.ok(elapsedMs > 300, `the acquisition took only ${elapsedMs} ms; too short to show anything`);
    assert.ok(
      maxLagMs < Math.min(1000, elapsedMs / 4),
      `the event loop stalled for ${maxLagMs} ms of ${elapsedMs}`,
    );
    assert.ok(ticks > elapsedMs / 100, `only ${ticks} ticks in ${elapsedMs} ms`);
  });
});
