import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import {
  loadStatxMountedIdentity,
  type MountedIdentityOf,
  procfsMountedIdentity,
} from '../../../src/sources/confined-fs/mount-identity.js';

const O_PATH = 0o10000000;

const implementations: [string, MountedIdentityOf | undefined][] = [
  ['procfs (fdinfo)', procfsMountedIdentity],
  ['statx (STATX_MNT_ID)', loadStatxMountedIdentity()],
];

describe('mounted identity (mount-identity.ts)', () => {
  for (const [name, identity] of implementations) {
    it(`${name}: a handle and its path agree; another mount has another mount id`, (t) => {
      if (identity === undefined) return t.skip('statx with STATX_MNT_ID is not available here');
      const fds = ['/', '/proc', '/tmp'].map((probe) => fs.openSync(probe, O_PATH));
      try {
        const [root, proc] = fds.map((fd) => identity.ofFd(fd)) as [
          ReturnType<MountedIdentityOf['ofFd']>,
          ReturnType<MountedIdentityOf['ofFd']>,
        ];
        assert.deepEqual(identity.ofPath(Buffer.from('/')), root);
        assert.deepEqual(identity.ofPath(Buffer.from('/proc')), proc);
        assert.notEqual(root.mountId, proc.mountId, '/proc is a mount of its own');
        const stat = fs.statSync('/');
        assert.equal(root.dev, stat.dev);
        assert.equal(root.ino, stat.ino);
        // Both implementations say the same of the same handles.
        for (const fd of fds) assert.deepEqual(identity.ofFd(fd), procfsMountedIdentity.ofFd(fd));
      } finally {
        for (const fd of fds) fs.closeSync(fd);
      }
    });
    it(`${name}: a missing path fails with ENOENT`, (t) => {
      if (identity === undefined) return t.skip('statx with STATX_MNT_ID is not available here');
      assert.throws(() => identity.ofPath(Buffer.from('/nonexistent-witness-path')), { code: 'ENOENT' });
    });
  }
});
