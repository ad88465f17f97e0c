import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, it } from 'node:test';
import { recordingFs } from '../support/recording-fs.js';
import { describeEachSurfaceFs } from '../support/surface-fs-variants.js';
import { acquireDirect, removeDir, tempDir } from '../support/trees.js';

/**
 * The attack (acquire-sync.ts, rootNamedHere), mounted for real: a root given as `/proc/<pid>/root/…` of a
 * process in another mount namespace. There, the root's directory is a fresh tmpfs holding an absolute
 * symlink to `<root>/host.txt`; here, the same path is the host's directory holding a secret. The kernel
 * names the root handle by the other namespace's path, which is the host directory's path string; the
 * link is resolved here, to the host's secret, whose path starts with that string. Without the check that
 * the root's path names the held directory here, the secret is read and reported as inside (it was, in
 * review: a TRUE verdict on the host's file). Needs root (unshare -m), as the rest of the heavy lane has.
 */
describeEachSurfaceFs('a root in another mount namespace', (variant) => {
  let dir: string;
  let nsRoot: string;
  let child: ChildProcess;
  before(async () => {
    dir = tempDir('witness-root-ns-');
    nsRoot = path.join(fs.realpathSync(dir), 'ns-root');
    fs.mkdirSync(nsRoot);
    fs.writeFileSync(path.join(nsRoot, 'host.txt'), 'HOST SECRET outside the namespace root');
    const script = [
      `mount -t tmpfs none '${nsRoot}'`,
      `ln -s '${nsRoot}/host.txt' '${nsRoot}/leak.txt'`,
      `echo inside > '${nsRoot}/inner.txt'`,
      'echo ready',
      'exec sleep 120',
    ].join(' && ');
    child = spawn('unshare', ['-m', '--propagation', 'private', 'sh', '-c', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const [line] = (await once(child.stdout as NodeJS.ReadableStream, 'data')) as [Buffer];
    assert.equal(line.toString('utf8').trim(), 'ready', 'the namespace was set up');
  });
  after(() => {
    child.kill('SIGKILL');
    removeDir(dir);
  });

  for (const uri of ['/leak.txt', '/inner.txt']) {
    it(`reads nothing at ${uri}: the root's path names another directory here`, () => {
      const root = `/proc/${child.pid}/root${nsRoot}`;
      // The namespace really differs: through the magic link the root holds the link, here it does not.
      assert.ok(fs.lstatSync(path.join(root, 'leak.txt')).isSymbolicLink());
      assert.equal(fs.existsSync(path.join(nsRoot, 'leak.txt')), false);
      const { fs: seam, recording } = recordingFs({}, variant.fs);
      const result = acquireDirect(root, uri, 'exact', {}, seam);
      assert.equal(result.acquisition, 'partial');
      assert.deepEqual(result.entries, []);
      assert.deepEqual(
        result.gaps.map((gap) => gap.reason),
        ['confinement_unverified'],
      );
      assert.equal(recording.bytesRead, 0);
      assert.doesNotMatch(JSON.stringify(result), /HOST SECRET/);
      assert.deepEqual([...recording.openFds], []);
    });
  }
});
