import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { it } from 'node:test';
import { checkNonTextEvidence } from './support/non-text-evidence.js';

/** A 1 MiB binary, stored compactly and judged from what was kept; the 16 MB file: the heavy twin. */
it('stores a 1 MiB binary as its length, digest and prefix, and judges it the same again', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'witness-non-text-'));
  try {
    await checkNonTextEvidence(dir, 1024 * 1024);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
