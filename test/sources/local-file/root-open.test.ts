import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, it } from 'node:test';
import type { SurfaceFs } from '../../../src/sources/confined-fs/surface-fs.js';
import { recordingFs } from '../support/recording-fs.js';
import { describeEachSurfaceFs } from '../support/surface-fs-variants.js';
import { acquireDirect, buildTree, mkfifo, removeDir, tempDir, textEntry } from '../support/trees.js';

/**
 * The root is opened by the path the caller gave, in one lookup in which the kernel resolves its
 * symlinks (acquire-sync.ts, `openRoot`); the handle's kernel path is the resolved root, and `realpath`
 * runs only when that path cannot be read. These tests pin what that open must keep: the resolved root
 * of a root given through links, the errors of a root that is missing or no directory, the call sequence
 * (no `realpath` on the way), and the refusal of a root the kernel cannot name under '/'.
 */

describeEachSurfaceFs('opening the root', (variant) => {
  let dir: string;
  let root: string;
  let real: string;
  before(() => {
    dir = tempDir('witness-root-open-');
    root = path.join(dir, 'ws');
    fs.mkdirSync(root);
    buildTree(root, { data: { dir: { 'out.txt': 'hello', sub: { dir: { 'deep.txt': 'deep' } } } } });
    real = fs.realpathSync(root);
    // A chain: an absolute link to a relative link to the root.
    fs.symlinkSync('ws', path.join(dir, 'relative-link'));
    fs.symlinkSync(path.join(dir, 'relative-link'), path.join(dir, 'chain'));
    fs.symlinkSync('nothing-here', path.join(dir, 'dangling'));
    fs.symlinkSync('loop-b', path.join(dir, 'loop-a'));
    fs.symlinkSync('loop-a', path.join(dir, 'loop-b'));
    fs.writeFileSync(path.join(dir, 'file'), 'a file, not a directory');
    fs.symlinkSync('file', path.join(dir, 'file-link'));
    mkfifo(path.join(dir, 'fifo'));
  });
  after(() => removeDir(dir));

  it('a root given through a chain of links is the real directory, and nothing but the root is resolved by name', () => {
    const { fs: seam, recording } = recordingFs({}, variant.fs);
    const result = acquireDirect(path.join(dir, 'chain'), '/data/sub/deep.txt', 'exact', {}, seam);
    assert.equal(result.acquisition, 'complete');
    assert.equal(result.rootPath, real);
    assert.deepEqual(result.entries, [textEntry('/data/sub/deep.txt', 'deep')]);
    // The sequence up to the walk: one open of the path as given, the /proc check, the handle's path.
    assert.deepEqual(
      recording.calls.slice(0, 3).map((call) => call.op),
      ['openRoot', 'procIsTrusted', 'handlePath'],
    );
    assert.equal(recording.calls[0]?.where, path.join(dir, 'chain'));
    assert.ok(!recording.calls.some((call) => call.op === 'resolveRoot'), 'realpath ran');
    assert.deepEqual([...recording.openFds], [], 'a handle was left open');
  });

  const unavailable: [string, string, string][] = [
    ['a missing root', 'missing', 'the root cannot be opened (ENOENT)'],
    ['a dangling link', 'dangling', 'the root cannot be opened (ENOENT)'],
    ['a loop of links', 'loop-a', 'the root cannot be opened (ELOOP)'],
    ['a file', 'file', 'the root is not a directory'],
    ['a link to a file', 'file-link', 'the root is not a directory'],
    ['a FIFO (opened without blocking: O_DIRECTORY fails first)', 'fifo', 'the root is not a directory'],
    ['a path through a file', 'file/below', 'the root is not a directory'],
  ];
  for (const [what, name, detail] of unavailable) {
    it(`${what} is unavailable: ${detail}`, () => {
      const { fs: seam, recording } = recordingFs({}, variant.fs);
      const result = acquireDirect(path.join(dir, name), '/data/out.txt', 'exact', {}, seam);
      assert.equal(result.acquisition, 'unavailable');
      assert.deepEqual(result.entries, []);
      assert.deepEqual(result.gaps, [{ reason: 'surface_root_unavailable', uri: '/', detail }]);
      assert.equal(result.rootPath, undefined);
      assert.deepEqual(
        recording.calls.map((call) => call.op),
        ['openRoot'],
      );
    });
  }

  it('where /proc cannot be trusted, nothing is read and the root is named by realpath', () => {
    const { fs: recorded, recording } = recordingFs({}, variant.fs);
    const seam: SurfaceFs = { ...recorded, procIsTrusted: () => false };
    const result = acquireDirect(path.join(dir, 'chain'), '/data/out.txt', 'exact', {}, seam);
    assert.equal(result.acquisition, 'partial');
    assert.deepEqual(result.entries, []);
    assert.deepEqual(
      result.gaps.map((gap) => gap.reason),
      ['confinement_unverified'],
    );
    assert.equal(result.rootPath, real);
    assert.deepEqual(
      recording.calls.map((call) => call.op),
      ['openRoot', 'resolveRoot', 'close'],
    );
  });

  it('where /proc cannot be trusted and the root is gone by then, the answer names no root', () => {
    const gone = path.join(dir, 'gone');
    fs.mkdirSync(gone);
    const seam: SurfaceFs = {
      ...variant.fs,
      procIsTrusted: () => {
        fs.rmdirSync(gone);
        return false;
      },
    };
    const result = acquireDirect(gone, '/data/out.txt', 'exact', {}, seam);
    assert.equal(result.acquisition, 'partial');
    assert.deepEqual(
      result.gaps.map((gap) => gap.reason),
      ['confinement_unverified'],
    );
    assert.equal(result.rootPath, undefined);
  });

  // The attack (rootNamedHere in acquire-sync.ts): a root reached through a magic link into another mount
  // namespace, whose kernel path names, here, another directory. Every placement compares handle paths
  // with that string, so a link resolved here to a file under the other directory would be placed
  // "inside" and read. The seam reports another real directory's path for the root handle (the real
  // namespace case, which needs privileges, is root-namespace.heavy.test.ts); without the check the file
  // below is read.
  it('a root whose kernel path names another directory here is not confined to: nothing is read', () => {
    const { fs: recorded, recording } = recordingFs({}, variant.fs);
    const other = path.join(dir, 'other');
    fs.mkdirSync(other, { recursive: true });
    const seam = reportingRootPath(recorded, Buffer.from(fs.realpathSync(other)));
    const result = acquireDirect(root, '/data/out.txt', 'exact', {}, seam);
    assert.equal(result.acquisition, 'partial');
    assert.deepEqual(result.entries, []);
    assert.deepEqual(
      result.gaps.map((gap) => [gap.reason, gap.uri]),
      [['confinement_unverified', '/data/out.txt']],
    );
    assert.equal(result.rootPath, undefined, 'a root that cannot be named is not named');
    assert.equal(recording.bytesRead, 0);
    assert.ok(!recording.calls.some((call) => call.op === 'openPathAt' || call.op === 'openDirectoryAt'));
    assert.deepEqual([...recording.openFds], []);
  });

  // A root reached through a magic link (`/proc/<pid>/cwd`) after its directory was removed: the kernel
  // still opens it, and names it "<path> (deleted)". Walked, it would be an empty, complete directory — a
  // proven absence of every locator; it is unavailable, as a missing root is.
  it('a removed root reached through /proc/<pid>/cwd is unavailable, not an empty complete directory', async () => {
    const removed = path.join(dir, 'removed');
    fs.mkdirSync(removed);
    const child = spawn('sleep', ['60'], { cwd: removed, stdio: 'ignore' });
    try {
      await once(child, 'spawn');
      fs.rmdirSync(removed);
      const result = acquireDirect(`/proc/${child.pid}/cwd`, '/data/out.txt', 'exact', {}, variant.fs);
      assert.equal(result.acquisition, 'unavailable');
      assert.deepEqual(result.entries, []);
      assert.deepEqual(
        result.gaps.map((gap) => gap.reason),
        ['surface_root_unavailable'],
      );
      assert.match(result.gaps[0]?.detail ?? '', /no longer names it \(ENOENT\)/);
    } finally {
      child.kill('SIGKILL');
    }
  });

  // The attack: a root reached through a magic link to a directory outside this process's root or mount
  // namespace, which the kernel names without a leading '/' ("(unreachable)/…"). Every placement compares
  // a handle's path with the root's, so such a root could place nothing; the openat2 seam would still
  // read a file its lookup proved beneath the handle and report it under a root that names nothing. The
  // seam is made to report such a path for the root handle (an unprivileged test cannot leave its mount
  // namespace); without the check, the file below is read (the mutation was tried by hand).
  for (const reported of ['(unreachable)/ws', '']) {
    it(`a root the kernel names as ${JSON.stringify(reported)} is not confined to: nothing is read`, () => {
      const { fs: recorded, recording } = recordingFs({}, variant.fs);
      const seam = reportingRootPath(recorded, Buffer.from(reported));
      const result = acquireDirect(root, '/data/out.txt', 'exact', {}, seam);
      assert.equal(result.acquisition, 'partial');
      assert.deepEqual(result.entries, []);
      assert.deepEqual(
        result.gaps.map((gap) => gap.reason),
        ['confinement_unverified'],
      );
      assert.equal(result.rootPath, real);
      assert.equal(recording.bytesRead, 0);
      assert.ok(!recording.calls.some((call) => call.op === 'openPathAt' || call.op === 'openDirectoryAt'));
      assert.deepEqual([...recording.openFds], []);
    });
  }
});

/** `seam`, except that the kernel path it reports for the root's handle is `rootPath`. */
function reportingRootPath(seam: SurfaceFs, rootPath: Buffer): SurfaceFs {
  let rootFd: number | undefined;
  return {
    ...seam,
    openRoot: (given) => {
      rootFd = seam.openRoot(given);
      return rootFd;
    },
    handlePath: (fd) => (fd === rootFd ? rootPath : seam.handlePath(fd)),
  };
}
