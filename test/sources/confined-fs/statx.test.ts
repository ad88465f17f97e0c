import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadStatx, loadStatxFd } from '../../../src/sources/confined-fs/statx.js';
import { removeDir, tempDir } from '../support/trees.js';

/** The manifest walk's statx must say exactly what Node's lstat says, and fail the way it fails. */

const statxAt = loadStatx();

/** A file whose modification time is `seconds` since the epoch (which the time's sign tests need). */
function writeAt(file: string, seconds: number): void {
  fs.writeFileSync(file, 'dated');
  // A Date, not a number: Node takes a negative number of seconds for "now".
  const when = new Date(seconds * 1000);
  fs.utimesSync(file, when, when);
  assert.equal(fs.statSync(file).mtimeMs, seconds * 1000, 'the file system keeps this time');
}

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
    // Times before 1970 and past 2106: the high word of the seconds is signed, negative then above 0.
    writeAt(path.join(root, 'before-1970.txt'), -0.5);
    writeAt(path.join(root, 'after-2106.txt'), 2 ** 32 + 12.25);
    dirFd = fs.openSync(root, 'r');
  });
  after(() => {
    fs.closeSync(dirFd);
    removeDir(root);
  });

  for (const name of ['file.txt', 'dir', 'link', 'fifo', 'before-1970.txt', 'after-2106.txt']) {
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

const statxFd = loadStatxFd();

/** The openat2 seam's fstat is statx of the handle: the same answers as Node's fstat, for every kind. */
describe('statx of a handle (fstat)', {
  skip: statxFd === undefined ? 'statx unavailable' : false,
}, () => {
  let root: string;
  const held: number[] = [];
  const O_PATH = 0o10000000;
  before(() => {
    root = tempDir();
    fs.writeFileSync(path.join(root, 'file.txt'), 'twelve bytes');
    fs.mkdirSync(path.join(root, 'dir'));
    fs.symlinkSync('file.txt', path.join(root, 'link'));
    execFileSync('mkfifo', [path.join(root, 'fifo')]);
    writeAt(path.join(root, 'before-1970.txt'), -0.5);
    writeAt(path.join(root, 'after-2106.txt'), 2 ** 32 + 12.25);
  });
  after(() => {
    for (const fd of held) fs.closeSync(fd);
    removeDir(root);
  });

  const cases: [string, () => number][] = [
    ['a regular file opened for reading', () => fs.openSync(path.join(root, 'file.txt'), 'r')],
    ['a directory', () => fs.openSync(path.join(root, 'dir'), 'r')],
    [
      'an O_PATH handle through a link (the link followed)',
      () => fs.openSync(path.join(root, 'link'), O_PATH),
    ],
    [
      'an O_PATH handle of a FIFO (never opened for reading)',
      () => fs.openSync(path.join(root, 'fifo'), O_PATH),
    ],
    ['/dev/null', () => fs.openSync('/dev/null', 'r')],
    ['a file modified before 1970', () => fs.openSync(path.join(root, 'before-1970.txt'), 'r')],
    ['a file modified after 2106', () => fs.openSync(path.join(root, 'after-2106.txt'), O_PATH)],
  ];
  for (const [what, openIt] of cases) {
    it(`agrees with fstat on ${what}`, () => {
      const fd = openIt();
      held.push(fd);
      const ours = (statxFd as NonNullable<typeof statxFd>)(fd);
      const node = fs.fstatSync(fd);
      assert.deepEqual(
        [ours.dev, ours.ino, ours.size, ours.mode, ours.mtimeMs, ours.ctimeMs],
        [node.dev, node.ino, node.size, node.mode, node.mtimeMs, node.ctimeMs],
      );
      const kinds = (s: typeof ours) => [
        s.isFile(),
        s.isDirectory(),
        s.isSymbolicLink(),
        s.isFIFO(),
        s.isSocket(),
        s.isCharacterDevice(),
        s.isBlockDevice(),
      ];
      assert.deepEqual(kinds(ours), kinds(node));
    });
  }

  it('fails on a closed handle with EBADF, like Node', () => {
    const fd = fs.openSync(path.join(root, 'file.txt'), 'r');
    fs.closeSync(fd);
    assert.throws(() => (statxFd as NonNullable<typeof statxFd>)(fd), { code: 'EBADF' });
    assert.throws(() => fs.fstatSync(fd), { code: 'EBADF' });
  });
});
