import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as lanes from '../../../src/sources/local-file/read-lanes.js';
import { LINK, LINK_INTS } from '../../../src/sources/local-file/reader-link.js';

/**
 * The second reader's link layout lives in its own module so that loading the acquisition pool (which
 * `witness score` does first, to start the worker early) does not load the readers and node:crypto
 * before the worker can be created (issue 14, row 4c).
 */

/** Node's built-in modules that importing `file` loads, in a fresh process. */
function builtinsLoadedBy(file: string): string[] {
  const script = `const before = new Set(process.moduleLoadList);
await import(${JSON.stringify(file)});
process.stdout.write(JSON.stringify(process.moduleLoadList.filter((m) => !before.has(m))));`;
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
  return JSON.parse(result.stdout) as string[];
}

const LIBRARY_POOL = fileURLToPath(
  new URL('../../../src/sources/local-file/acquisition-pool.js', import.meta.url),
);
const LIBRARY_READERS = fileURLToPath(
  new URL('../../../src/sources/local-file/read-lanes.js', import.meta.url),
);
const BUNDLED_POOL = fileURLToPath(new URL('../../../cli/acquisition-pool.js', import.meta.url));

describe('the reader link layout', () => {
  it('is the one read-lanes.ts and second-reader.ts use (one definition, re-exported)', () => {
    assert.equal(lanes.LINK, LINK);
    assert.equal(lanes.LINK_INTS, LINK_INTS);
    const indices = Object.values(LINK);
    assert.deepEqual(
      [...indices].sort((a, b) => a - b),
      Array.from({ length: LINK_INTS }, (_, i) => i),
      'every Int32 of the shared state has exactly one meaning',
    );
  });

  it('loading the pool does not load node:crypto (the readers stay in the worker)', () => {
    assert.ok(!builtinsLoadedBy(LIBRARY_POOL).includes('NativeModule crypto'));
    // Control: the readers themselves do load it, so the check above can fail.
    assert.ok(builtinsLoadedBy(LIBRARY_READERS).includes('NativeModule crypto'));
  });

  it('nor does the bundled pool that `witness score` loads first (after `npm run build`)', (t) => {
    if (!existsSync(BUNDLED_POOL)) {
      t.skip('dist/cli is built by `npm run build` only');
      return;
    }
    assert.ok(!builtinsLoadedBy(BUNDLED_POOL).includes('NativeModule crypto'));
  });
});
