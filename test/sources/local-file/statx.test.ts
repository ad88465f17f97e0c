import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadStatx } from '../../../src/sources/local-file/statx.js';
import { removeDir, tempDir } from '../support/trees.js';

/** The manifest walk's statx must say exactly what Node's lstat says, and fail the way it fails. */

const statxAt = loadStatx();

describe('statx relative to a directory handle', {
  skip: statxAt === undefined ? 'statx unavailable' : false,
}, () => {
  let root: string;
  let dirFd: number;
  before(() => {
    root = tempDir();
    fs.writeFileSync(path.join(root, 'file.txt'), 'twelve bytes');
    fs.chmodSync(path.join(root, 'file.txt'), 0o4751);
    fs.mkdirSync(path.join(root, 'dir'));
    fs.symlinkSync('/etc/passwd', path.join(root, 'link'));
    execFileSync('mkfifo', [path.join(root, 'fifo')]);
    dirFd = fs.openSync(root, 'r');
  });
  after(() => {
    fs.closeSync(dirFd);
    removeDir(root);
  });

  for (const name of ['file.txt', 'dir', 'link', 'fifo']) {
    it(`agrees with lstat on ${name} (never following a link)`, () => {
      const ours = (statxAt as NonNullable<typeof statxAt>)(dirFd, Buffer.from(name));
      const node = fs.lstatSync(path.join(root, name));
      assert.deepEqual(
        [ours.dev, ours.ino, ours.size, ours.mode, ours.mtimeMs, ours.ctimeMs],
        [node.dev, node.ino, node.size, node.mode, node.mtimeMs, node.ctimeMs],
      );
      assert.deepEqual(
        [ours.isFile(), ours.isDirectory(), ours.isSymbolicLink()],
        [node.isFile(), node.isDirectory(), node.isSymbolicLink()],
      );
    });
  }

  it('fails with the errno name as its code, like Node', () => {
    const at = statxAt as NonNullable<typeof statxAt>;
    assert.throws(() => at(dirFd, Buffer.from('missing')), { code: 'ENOENT' });
    assert.throws(() => at(dirFd, Buffer.from('file.txt/x')), { code: 'ENOTDIR' });
    assert.throws(() => at(dirFd, Buffer.from('a\0b')), { code: 'EINVAL' });
  });
});
