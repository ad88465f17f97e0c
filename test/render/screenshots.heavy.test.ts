import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, it } from 'node:test';
import { takeScreenshots } from '../../scripts/report-screenshot.js';
import { chromiumMissing } from '../support/chromium.js';

/**
 * The script that regenerates the README's and docs' screenshots (scripts/report-screenshot.ts) still
 * runs against the current code: it writes every picture the docs show, each a real 1400-pixel-wide PNG.
 */

const EXPECTED = [
  'report-screenshot.png',
  'view-runs.png',
  'view-run.png',
  'view-run-filtered.png',
  'view-attempt.png',
  'view-compare.png',
  'view-library.png',
];

/** Width and height from a PNG's IHDR chunk. */
function pngSize(bytes: Buffer): { width: number; height: number } {
  assert.deepEqual([...bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'a PNG');
  assert.equal(bytes.subarray(12, 16).toString('latin1'), 'IHDR');
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

describe('scripts/report-screenshot.ts', { skip: chromiumMissing }, () => {
  it('writes every screenshot the docs show, 1400 pixels wide', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'witness-screenshots-'));
    try {
      const written = await takeScreenshots(dir);
      assert.deepEqual(
        written.map((path) => basename(path)),
        EXPECTED,
      );
      for (const path of written) {
        const bytes = readFileSync(path);
        const size = pngSize(bytes);
        assert.equal(size.width, 1400, path);
        assert.ok(size.height >= 600, `${path} is ${size.height} pixels high`);
        assert.ok(bytes.length > 20_000, `${path} holds ${bytes.length} bytes: a blank page?`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
