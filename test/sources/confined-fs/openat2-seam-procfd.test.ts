import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadOpenat2 } from '../../../src/sources/confined-fs/openat2.js';
import {
  heldProcFdDirectory,
  openat2SurfaceFs,
} from '../../../src/sources/confined-fs/openat2-surface-fs.js';
import { nodeSurfaceFs, O_PATH } from '../../../src/sources/confined-fs/surface-fs.js';
import { removeDir, tempDir } from '../support/trees.js';

/**
 * The openat2 seam asks the kernel where a handle is (`handlePath`) and reopens a checked O_PATH handle
 * for reading relative to a held `/proc/self/fd` handle, instead of resolving `/proc/self/fd/N` each
 * time. The answers must be the procfs seam's, for every kind of handle and every failure.
 */

const loaded = loadOpenat2();

describe('openat2 seam: handle paths and reopening through a held /proc/self/fd', {
  skip: loaded.available ? false : `openat2 unavailable: ${loaded.reason}`,
}, () => {
  let root: string;
  const held: number[] = [];
  const seam = () =>
    openat2SurfaceFs((loaded as { binding: Parameters<typeof openat2SurfaceFs>[0] }).binding);
  const hold = (fd: number) => {
    held.push(fd);
    return fd;
  };
  before(() => {
    root = tempDir();
    fs.writeFileSync(path.join(root, 'file.txt'), 'contents');
    fs.writeFileSync(path.join(root, 'doomed.txt'), 'soon gone');
    fs.mkdirSync(path.join(root, 'dir'));
    fs.symlinkSync('file.txt', path.join(root, 'link'));
    fs.writeFileSync(path.join(root, 'name with spaces\nand a newline'), 'x');
  });
  after(() => {
    for (const fd of held) fs.closeSync(fd);
    removeDir(root);
  });

  it('reports the same path as readlink /proc/self/fd/N for files, directories, links and deleted files', () => {
    const fds = [
      hold(fs.openSync(path.join(root, 'file.txt'), O_PATH)),
      hold(fs.openSync(path.join(root, 'dir'), 'r')),
      hold(fs.openSync(path.join(root, 'link'), O_PATH)),
      hold(fs.openSync(path.join(root, 'name with spaces\nand a newline'), O_PATH)),
      hold(fs.openSync(path.join(root, 'doomed.txt'), O_PATH)),
    ];
    fs.unlinkSync(path.join(root, 'doomed.txt'));
    const ours = fds.map((fd) => seam().handlePath(fd).toString());
    assert.deepEqual(
      ours,
      fds.map((fd) => nodeSurfaceFs.handlePath(fd).toString()),
    );
    assert.equal(ours[2], path.join(root, 'file.txt'), 'the link was followed by the O_PATH open');
    assert.equal(ours[4], `${path.join(root, 'doomed.txt')} (deleted)`);
  });

  it('fails like the procfs seam for a handle that is not open', () => {
    const fd = fs.openSync(path.join(root, 'file.txt'), O_PATH);
    fs.closeSync(fd);
    assert.throws(() => nodeSurfaceFs.handlePath(fd), { code: 'ENOENT' });
    assert.throws(() => seam().handlePath(fd), { code: 'ENOENT' });
    assert.throws(() => seam().reopenForRead(fd), { code: 'ENOENT' });
  });

  it('reopens the O_PATH handle itself, even after its name now holds another file', () => {
    const s = seam();
    const pathFd = hold(fs.openSync(path.join(root, 'file.txt'), O_PATH));
    const before = fs.fstatSync(pathFd);
    // The name is taken over by a different file: the reopen must still reach the checked one.
    fs.renameSync(path.join(root, 'file.txt'), path.join(root, 'moved.txt'));
    fs.writeFileSync(path.join(root, 'file.txt'), 'impostor');
    const readFd = s.reopenForRead(pathFd);
    try {
      const stat = fs.fstatSync(readFd);
      assert.deepEqual([stat.dev, stat.ino], [before.dev, before.ino]);
      const buffer = Buffer.alloc(64);
      assert.equal(buffer.subarray(0, s.read(readFd, buffer, 64)).toString(), 'contents');
    } finally {
      s.close(readFd);
      fs.renameSync(path.join(root, 'moved.txt'), path.join(root, 'file.txt'));
    }
  });

  // Last in this file: it leaves this thread without a held handle (the procfs route serves after it).
  it('a held handle closed by mistake and reused for a workspace directory is noticed at the next root', () => {
    const koffi = createRequire(import.meta.url)('koffi') as {
      load(path: null): { func(signature: string): (...args: number[]) => number };
    };
    const dup2 = koffi.load(null).func('int dup2(int oldfd, int newfd)');
    const s = seam();
    const held = heldProcFdDirectory();
    assert.notEqual(held, undefined);
    const fileFd = hold(fs.openSync(path.join(root, 'file.txt'), O_PATH));
    const truth = nodeSurfaceFs.handlePath(fileFd).toString();
    // An agent's directory holding a link named like the handle, pointing at a lie about its place.
    fs.mkdirSync(path.join(root, 'planted'));
    fs.symlinkSync('/somewhere/inside/the/root', path.join(root, 'planted', String(fileFd)));
    const planted = fs.openSync(path.join(root, 'planted'), 'r');
    try {
      // Some bug closes the held handle and its number is reused for the agent's directory.
      assert.equal(dup2(planted, held as number), held);
      // Control: without the check, the kernel's "path for the handle" is read from the planted link.
      assert.equal(s.handlePath(fileFd).toString(), '/somewhere/inside/the/root');
      // The next acquisition opens a root: the held handle is found not to be /proc/self/fd any more.
      s.close(s.openRoot(root));
      assert.equal(heldProcFdDirectory(), undefined);
      assert.equal(s.handlePath(fileFd).toString(), truth);
      const readFd = s.reopenForRead(fileFd);
      s.close(readFd);
    } finally {
      fs.closeSync(planted);
      fs.closeSync(held as number);
    }
  });
});
