import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadOpenat2 } from '../../../src/sources/confined-fs/openat2.js';
import { removeDir, tempDir } from '../support/trees.js';

/**
 * The openat2 seam reads with read(2) through koffi instead of `fs.readSync(fd, buffer, 0, length, null)`.
 * It must do what that call did: bytes at the handle's position into the start of the buffer it is given
 * (a view into a larger buffer included: koffi must honour the view's offset, or a read would land in
 * memory that belongs to something else), never more than `length` and never past the buffer, and
 * failures named as Node names them (the walk's gaps say `read failed (EISDIR)`).
 */

const loaded = loadOpenat2();

describe('openat2 binding: read', {
  skip: loaded.available ? false : `openat2 unavailable: ${loaded.reason}`,
}, () => {
  let root: string;
  const binding = () => (loaded as Extract<typeof loaded, { available: true }>).binding;
  before(() => {
    root = tempDir();
    fs.writeFileSync(path.join(root, 'f.txt'), 'abcdefghij');
  });
  after(() => removeDir(root));

  it('reads at the handle position into the view it is given, and no further than length', () => {
    const fd = fs.openSync(path.join(root, 'f.txt'), 'r');
    try {
      const whole = Buffer.alloc(32, 0x2e);
      const view = whole.subarray(8, 20);
      assert.equal(binding().read(fd, view, 4), 4);
      assert.equal(binding().read(fd, view.subarray(4), 3), 3);
      assert.equal(whole.toString('latin1'), `${'.'.repeat(8)}abcdefg${'.'.repeat(17)}`);
      // The rest of the file, then its end.
      assert.equal(binding().read(fd, view, view.length), 3);
      assert.equal(binding().read(fd, view, view.length), 0);
    } finally {
      fs.closeSync(fd);
    }
  });

  it('refuses a length beyond the buffer before any call', () => {
    const fd = fs.openSync(path.join(root, 'f.txt'), 'r');
    try {
      const whole = Buffer.alloc(16, 0x2e);
      assert.throws(() => binding().read(fd, whole.subarray(0, 4), 5), RangeError);
      assert.equal(whole.toString('latin1'), '.'.repeat(16));
      // Nothing was consumed: the next read starts at the beginning.
      assert.equal(binding().read(fd, whole, 3), 3);
      assert.equal(whole.subarray(0, 3).toString(), 'abc');
    } finally {
      fs.closeSync(fd);
    }
  });

  it('names a failure as Node does', () => {
    const fd = fs.openSync(root, 'r');
    try {
      let nodeCode: string | undefined;
      try {
        fs.readSync(fd, Buffer.alloc(8), 0, 8, null);
      } catch (error) {
        nodeCode = (error as { code?: string }).code;
      }
      assert.equal(nodeCode, 'EISDIR');
      assert.throws(
        () => binding().read(fd, Buffer.alloc(8), 8),
        (error: unknown) => (error as { code?: string }).code === nodeCode,
      );
    } finally {
      fs.closeSync(fd);
    }
  });
});
