import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  closeHandle,
  createFileAt,
  listDirectoryAt,
  makeDirectoryAt,
  openDirectoryAt,
  openDirectoryBeneath,
  openDirectoryPath,
  readSmallFileAt,
  writeNewFileAt,
} from '../../../src/sources/confined-fs.js';
import { buildTree, removeDir, tempDir } from '../support/trees.js';

/**
 * The handle primitives that workspace creation, planting, the agent's file tools and `witness clean` use:
 * each name is reached relative to a held directory handle and never through a symlink, so a link an agent
 * planted (to /etc, to another run's files) cannot redirect a write, a read or a descent.
 */
describe('confined handle primitives', () => {
  let base: string;
  let root: string;
  let outside: string;
  let rootFd: number;
  before(() => {
    base = tempDir('witness-handles-');
    root = path.join(base, 'root');
    outside = path.join(base, 'outside');
    fs.mkdirSync(outside);
    fs.mkdirSync(root);
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'SECRET');
    buildTree(root, {
      dir: { dir: { 'inner.txt': 'inner' } },
      'dir-link': { symlink: outside },
      'file-link': { symlink: path.join(outside, 'secret.txt') },
      dangling: { symlink: path.join(outside, 'created-through-a-link.txt') },
      fifo: { fifo: true },
      'marker.json': '{"pid":1}',
    });
    rootFd = openDirectoryPath(root);
  });
  after(() => {
    closeHandle(rootFd);
    removeDir(base);
  });

  it('opens a directory by name, never through a symlink to one nor into a file (ENOTDIR for both)', () => {
    closeHandle(openDirectoryAt(rootFd, 'dir'));
    assert.throws(() => openDirectoryAt(rootFd, 'dir-link'), { code: 'ENOTDIR' });
    assert.throws(() => openDirectoryAt(rootFd, 'marker.json'), { code: 'ENOTDIR' });
  });

  it('creates a directory or a file only where nothing is, a dangling link included: nothing outside is made', () => {
    assert.throws(() => makeDirectoryAt(rootFd, 'dir-link', 0o700), { code: 'EEXIST' });
    assert.throws(() => createFileAt(rootFd, 'dangling', 0o600), { code: 'EEXIST' });
    assert.throws(() => writeNewFileAt(rootFd, 'file-link', 'x', 0o600), { code: 'EEXIST' });
    assert.equal(fs.existsSync(path.join(outside, 'created-through-a-link.txt')), false);
    assert.equal(fs.readFileSync(path.join(outside, 'secret.txt'), 'utf8'), 'SECRET');
    const fd = makeDirectoryAt(rootFd, 'made', 0o700);
    try {
      writeNewFileAt(fd, 'new.txt', 'new', 0o600);
      assert.equal(fs.readFileSync(path.join(root, 'made', 'new.txt'), 'utf8'), 'new');
      assert.equal(fs.statSync(path.join(root, 'made', 'new.txt')).mode & 0o777, 0o600);
      assert.equal(fs.statSync(path.join(root, 'made')).mode & 0o777, 0o700);
    } finally {
      closeHandle(fd);
    }
  });

  it('walks a path beneath the root, creating what is missing, and names the segment a link stopped', () => {
    const fd = openDirectoryBeneath(rootFd, ['deep', 'er'], 0o755);
    closeHandle(fd);
    assert.ok(fs.statSync(path.join(root, 'deep', 'er')).isDirectory());
    assert.throws(() => openDirectoryBeneath(rootFd, ['dir-link', 'x'], 0o755), {
      code: 'ENOTDIR',
      segment: 0,
    });
    assert.equal(fs.existsSync(path.join(outside, 'x')), false);
    assert.throws(() => openDirectoryBeneath(rootFd, ['dir', 'missing']), { code: 'ENOENT', segment: 1 });
  });

  it('reads a small file boundedly, and refuses a FIFO without blocking and a link without following it', () => {
    assert.deepEqual(readSmallFileAt(rootFd, 'marker.json', 100), {
      bytes: Buffer.from('{"pid":1}'),
      truncated: false,
    });
    assert.deepEqual(readSmallFileAt(rootFd, 'marker.json', 4), {
      bytes: Buffer.from('{"pi'),
      truncated: true,
    });
    // A FIFO with no writer: opening it for reading by name would block this thread for ever.
    assert.throws(() => readSmallFileAt(rootFd, 'fifo', 100), { code: 'EINVAL' });
    assert.throws(() => readSmallFileAt(rootFd, 'file-link', 100), { code: 'EINVAL' });
  });

  it('lists a directory through its handle, at most the names asked for', () => {
    const dirFd = openDirectoryAt(rootFd, 'dir');
    try {
      assert.deepEqual(listDirectoryAt(dirFd, 10), {
        names: [{ name: Buffer.from('inner.txt'), kind: 'file' }],
        complete: true,
      });
    } finally {
      closeHandle(dirFd);
    }
    const listed = listDirectoryAt(rootFd, 2);
    assert.equal(listed.names.length, 2);
    assert.equal(listed.complete, false);
  });
});
