import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import { describe, it } from 'node:test';
import { checkRelativeUrls } from '../../scripts/bundle-cli.js';

/**
 * The bundle's build-time guard: the pool finds its worker as `new URL('./acquire-worker.js',
 * import.meta.url)`, so a bundle whose chunks name a file it did not emit would ship a CLI that fails
 * at its first acquisition. The build refuses it instead.
 */
describe('bundle-cli', () => {
  function bundleDir(files: Record<string, string>): string {
    const dir = fs.mkdtempSync(`${os.tmpdir()}/witness-bundle-`);
    for (const [name, text] of Object.entries(files)) fs.writeFileSync(`${dir}/${name}`, text);
    return dir;
  }

  it('refuses a chunk that refers to a file the bundle does not contain', () => {
    const dir = bundleDir({
      'chunk-ABCDEFGH.js': 'const worker = new Worker(new URL("./acquire-worker.js", import.meta.url));\n',
    });
    try {
      assert.throws(() => checkRelativeUrls(dir), /chunk-ABCDEFGH\.js refers to \.\/acquire-worker\.js/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('accepts it when the file is there', () => {
    const dir = bundleDir({
      'chunk-ABCDEFGH.js': "const worker = new Worker(new URL('./acquire-worker.js', import.meta.url));\n",
      'acquire-worker.js': '',
    });
    try {
      assert.doesNotThrow(() => checkRelativeUrls(dir));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
