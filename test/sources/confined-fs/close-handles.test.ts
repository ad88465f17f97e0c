import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadOpenat2 } from '../../../src/sources/confined-fs/openat2.js';
import { openat2SurfaceFs } from '../../../src/sources/confined-fs/openat2-surface-fs.js';
import { O_PATH, type SurfaceFs } from '../../../src/sources/confined-fs/surface-fs.js';
import { removeDir, tempDir } from '../support/trees.js';

/**
 * The openat2 seam's `closeHandles` closes a run of consecutive handle numbers in one close_range(2).
 * close_range closes EVERY number in its range, so the attack on it is a bug that closes a handle the
 * caller did not hand over — another thread's file, or the walk's own root or directory handle, whose
 * number could then be reused by an open the agent steers. These tests put a handle that is not in the
 * list between listed ones and check it is still open and still the same file afterwards.
 */

const loaded = loadOpenat2();

/** The file a handle holds now, or undefined when the number is closed. */
function identity(fd: number): string | undefined {
  try {
    const stat = fs.fstatSync(fd);
    return `${stat.dev}:${stat.ino}`;
  } catch (error) {
    assert.equal((error as { code?: string }).code, 'EBADF');
    return undefined;
  }
}

describe('openat2 seam: closeHandles', {
  skip: loaded.available ? false : `openat2 unavailable: ${loaded.reason}`,
}, () => {
  let root: string;
  let seam: SurfaceFs;
  let rootFd: number;
  const names = ['a.txt', 'b.txt', 'c.txt', 'd.txt', 'e.txt'];
  before(() => {
    root = tempDir();
    for (const name of names) fs.writeFileSync(path.join(root, name), name);
    seam = openat2SurfaceFs((loaded as { binding: Parameters<typeof openat2SurfaceFs>[0] }).binding);
    rootFd = seam.openRoot(root);
  });
  after(() => {
    seam.close(rootFd);
    removeDir(root);
  });

  /**
   * Handles of the five files opened through the seam, at consecutive numbers: lower free numbers are
   * filled first (handles opened and held until five in a row come), then the fillers are closed.
   */
  function consecutive(): number[] {
    const fillers: number[] = [];
    try {
      for (let attempt = 0; attempt < 200; attempt++) {
        const fds = names.map((name) => seam.openPathAt(rootFd, Buffer.from(name)));
        if (fds.every((fd, i) => i === 0 || fd === (fds[i - 1] as number) + 1)) return fds;
        fillers.push(...fds);
      }
      throw new Error('five consecutive handle numbers could not be had');
    } finally {
      for (const fd of fillers) seam.close(fd);
    }
  }

  it('closes every listed handle and leaves a handle between them open', () => {
    assert.equal(typeof seam.closeHandles, 'function');
    const fds = consecutive();
    const before = fds.map(identity);
    assert.ok(before.every((id) => id !== undefined));
    for (const fd of fds) assert.equal(seam.provenInside(fd), true);
    // c.txt (the middle one) is not listed: a range from a.txt to e.txt would close it.
    const [a, b, c, d, e] = fds as [number, number, number, number, number];
    seam.closeHandles?.([e, a, d, b]);
    for (const fd of [a, b, d, e]) {
      assert.equal(identity(fd), undefined, `handle ${fd} was listed and must be closed`);
      assert.equal(seam.provenInside(fd), false, 'a closed handle is forgotten (its number is reused)');
    }
    assert.equal(identity(c), before[2], 'the handle that was not listed is still open, and still c.txt');
    assert.equal(seam.provenInside(c), true);
    seam.close(c);
  });

  it('closes a pair of consecutive handles, in either order', () => {
    const fds = consecutive();
    const [a, b, c, d, e] = fds as [number, number, number, number, number];
    const kept = identity(c);
    seam.closeHandles?.([b, a]);
    seam.closeHandles?.([d, e]);
    for (const fd of [a, b, d, e]) assert.equal(identity(fd), undefined);
    assert.equal(identity(c), kept);
    seam.close(c);
  });

  it('closes a handle the seam did not open through koffi one by one, and never ranges over it', () => {
    const fds = consecutive();
    const [a, b, c, d, e] = fds as [number, number, number, number, number];
    // b's number now holds a handle opened by Node (the procfs route), not by the binding.
    seam.close(b);
    const nodeFd = fs.openSync(path.join(root, 'b.txt'), O_PATH);
    if (nodeFd !== b) {
      fs.closeSync(nodeFd);
      for (const fd of [a, c, d, e]) seam.close(fd);
      return; // another thread took the number: nothing to test in this round
    }
    const kept = identity(d);
    seam.closeHandles?.([a, b, c, e]);
    for (const fd of [a, b, c, e]) assert.equal(identity(fd), undefined, `handle ${fd} must be closed`);
    assert.equal(identity(d), kept, 'd.txt was not listed');
    seam.close(d);
  });
  it('closes one by one, and leaks nothing, where close_range is denied (a seccomp filter, an old kernel)', () => {
    const binding = (loaded as { binding: Parameters<typeof openat2SurfaceFs>[0] }).binding;
    let denied = 0;
    const denying = openat2SurfaceFs({
      ...binding,
      closeRange: () => {
        denied++;
        return false; // what the binding answers for any failure: nothing was closed
      },
    });
    const fd = denying.openRoot(root);
    const fds = names.map((name) => denying.openPathAt(fd, Buffer.from(name)));
    const sorted = [...fds].sort((x, y) => x - y);
    denying.closeHandles?.(sorted);
    if (sorted.some((handle, i) => i > 0 && handle === (sorted[i - 1] as number) + 1)) {
      assert.ok(denied >= 1, 'a run of consecutive handles tried close_range first');
    }
    for (const handle of fds) assert.equal(identity(handle), undefined, `handle ${handle} must be closed`);
    // A second list goes straight to one-by-one closing: the range is not tried again.
    const more = names.map((name) => denying.openPathAt(fd, Buffer.from(name)));
    const before = denied;
    denying.closeHandles?.([...more].sort((x, y) => x - y));
    for (const handle of more) assert.equal(identity(handle), undefined);
    assert.equal(denied, before, 'close_range is not tried again once it failed');
    assert.ok(identity(fd) !== undefined, 'the root handle was not listed and stays open');
    denying.close(fd);
  });
});
