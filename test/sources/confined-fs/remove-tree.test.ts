import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  closeSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  realpathSync,
  rmdirSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { removeTree, removeTreeAt } from '../../../src/sources/confined-fs/remove-tree.js';

describe('removeTree (confined removal)', () => {
  let base: string;
  let outside: string;
  beforeEach(() => {
    base = realpathSync(mkdtempSync(join(tmpdir(), 'witness-rm-')));
    outside = realpathSync(mkdtempSync(join(tmpdir(), 'witness-rm-outside-')));
    writeFileSync(join(outside, 'keep.txt'), 'keep');
    mkdirSync(join(outside, 'dir'));
    writeFileSync(join(outside, 'dir', 'keep2.txt'), 'keep');
  });
  afterEach(() => {
    rmSync(base, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  it('removes a tree and never follows a symlink out of it', () => {
    const ws = join(base, 'ws');
    mkdirSync(join(ws, 'a', 'b'), { recursive: true });
    writeFileSync(join(ws, 'a', 'b', 'f.txt'), 'x');
    writeFileSync(join(ws, 'top.txt'), 'x');
    symlinkSync(outside, join(ws, 'a', 'to-outside'));
    symlinkSync(join(outside, 'keep.txt'), join(ws, 'file-link'));
    symlinkSync('/nonexistent', join(ws, 'dangling'));
    execFileSync('mkfifo', [join(ws, 'a', 'fifo')]);
    const report = removeTree(ws);
    assert.deepEqual(report, { removed: true, removedEntries: 9, failures: [], unlistedFailures: 0 });
    assert.equal(existsSync(ws), false);
    assert.deepEqual(readdirSync(outside).sort(), ['dir', 'keep.txt']);
    assert.deepEqual(readdirSync(join(outside, 'dir')), ['keep2.txt']);
  });

  it('refuses a root that is a symlink (nothing behind it is removed)', () => {
    symlinkSync(outside, join(base, 'ws'));
    const report = removeTree(join(base, 'ws'));
    assert.equal(report.removed, false);
    assert.deepEqual(report.failures, [{ path: 'ws', reason: 'not a directory (a symlink?)' }]);
    assert.deepEqual(readdirSync(outside).sort(), ['dir', 'keep.txt']);
  });

  it('refuses a root that is no longer the directory that was created (device and inode)', () => {
    const ws = join(base, 'ws');
    mkdirSync(ws);
    const original = statSync(ws);
    rmSync(ws, { recursive: true });
    mkdirSync(ws);
    writeFileSync(join(ws, 'someone-elses.txt'), 'x');
    const report = removeTree(ws, { expected: { dev: original.dev, ino: original.ino + 1_000_000 } });
    assert.equal(report.removed, false);
    assert.match(report.failures[0]?.reason ?? '', /replaced/);
    assert.equal(existsSync(join(ws, 'someone-elses.txt')), true);
  });

  it('removes a directory chain deeper than PATH_MAX', () => {
    const ws = join(base, 'ws');
    mkdirSync(ws);
    // Built by handle: no path string of this depth can be used.
    const name = 'd'.repeat(200);
    let fd = openSync(ws, constants.O_RDONLY | constants.O_DIRECTORY);
    for (let level = 0; level < 30; level++) {
      mkdirSync(`/proc/self/fd/${fd}/${name}`);
      const next = openSync(`/proc/self/fd/${fd}/${name}`, constants.O_RDONLY | constants.O_DIRECTORY);
      closeSync(fd);
      fd = next;
    }
    writeFileSync(`/proc/self/fd/${fd}/deep.txt`, 'bottom');
    closeSync(fd);
    // The control: a remover that builds path strings fails here. (Node 20's fs.rm is one; Node 24's
    // no longer is, so the control is written out rather than borrowed from the runtime.)
    assert.throws(() => removeByPath(ws), /ENAMETOOLONG/, 'the control: a path-based remover fails');
    const report = removeTree(ws);
    assert.deepEqual(report, { removed: true, removedEntries: 32, failures: [], unlistedFailures: 0 });
  });

  it('reports an immutable file with its path and reason, removes the rest, and does not throw', (t) => {
    const ws = join(base, 'ws');
    mkdirSync(join(ws, 'sub'), { recursive: true });
    writeFileSync(join(ws, 'sub', 'locked.txt'), 'x');
    writeFileSync(join(ws, 'other.txt'), 'x');
    try {
      execFileSync('chattr', ['+i', join(ws, 'sub', 'locked.txt')], { stdio: 'ignore' });
    } catch {
      t.skip('this file system does not support chattr +i');
      return;
    }
    try {
      const report = removeTree(ws);
      assert.equal(report.removed, false);
      assert.deepEqual(report.failures, [{ path: 'ws/sub/locked.txt', reason: 'EPERM' }]);
      assert.equal(existsSync(join(ws, 'other.txt')), false);
    } finally {
      execFileSync('chattr', ['-i', join(ws, 'sub', 'locked.txt')]);
    }
    assert.equal(removeTree(ws).removed, true);
  });

  it('never empties a mount point inside the tree, and reports it', (t) => {
    const ws = join(base, 'ws');
    mkdirSync(join(ws, 'mnt'), { recursive: true });
    writeFileSync(join(ws, 'f.txt'), 'x');
    try {
      execFileSync('mount', ['-t', 'tmpfs', 'witness-test', join(ws, 'mnt')], { stdio: 'ignore' });
    } catch {
      t.skip('mounting needs CAP_SYS_ADMIN');
      return;
    }
    try {
      writeFileSync(join(ws, 'mnt', 'on-other-fs.txt'), 'x');
      const report = removeTree(ws);
      assert.equal(report.removed, false);
      assert.deepEqual(report.failures, [
        { path: 'ws/mnt', reason: 'mount point (another file system is never emptied)' },
      ]);
      assert.equal(existsSync(join(ws, 'mnt', 'on-other-fs.txt')), true);
      assert.equal(existsSync(join(ws, 'f.txt')), false);
    } finally {
      execFileSync('umount', [join(ws, 'mnt')]);
    }
  });

  it('is relative to a held parent handle: renaming the parent path does not redirect it', () => {
    const run = join(base, 'run');
    mkdirSync(join(run, 'attempt'), { recursive: true });
    writeFileSync(join(run, 'attempt', 'f.txt'), 'x');
    const runFd = openSync(run, constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      // The run directory's path now names a directory the removal must not touch.
      const moved = join(base, 'moved');
      execFileSync('mv', [run, moved]);
      mkdirSync(join(run, 'attempt'), { recursive: true });
      writeFileSync(join(run, 'attempt', 'decoy.txt'), 'x');
      assert.equal(removeTreeAt(runFd, 'attempt').removed, true);
      assert.equal(existsSync(join(moved, 'attempt')), false);
      assert.equal(existsSync(join(run, 'attempt', 'decoy.txt')), true);
    } finally {
      closeSync(runFd);
    }
  });
});

/** A naive remover that names every entry by its full path string (the approach the confined walk replaces). */
function removeByPath(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const child = join(dir, entry.name);
    if (entry.isDirectory()) removeByPath(child);
    else unlinkSync(child);
  }
  rmdirSync(dir);
}
