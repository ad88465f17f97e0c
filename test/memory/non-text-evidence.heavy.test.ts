import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { it } from 'node:test';
import { checkNonTextEvidence } from './support/non-text-evidence.js';

/**
 * The case: a 16 MB read of a file that is not text (it cost about 90 MB of stored JSON per
 * attempt, then its size once as raw bytes). Now its length, digest and a bounded prefix.
 */
it('stores a 16 MB binary as its length, digest and prefix, and judges it the same again', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'witness-non-text-'));
  try {
    await checkNonTextEvidence(dir, 16_000_000);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
