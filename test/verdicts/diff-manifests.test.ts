import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { countChanges } from '../../src/models/change-set.js';
import { nodeSurfaceFs, type SurfaceFs } from '../../src/sources/confined-fs/surface-fs.js';
import { diffManifests } from '../../src/verdicts/diff-manifests.js';
import { removeDir, tempDir } from '../sources/support/trees.js';
import { takeManifest } from '../support/manifests.js';

/** The change set (SPEC §12): what differs between the baseline and the final manifest, and what cannot be told. */

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

describe('diffManifests', () => {
  let root: string;
  const at = (name: string) => path.join(root, name);
  beforeEach(() => {
    root = tempDir();
    fs.mkdirSync(at('cfg'));
    fs.writeFileSync(at('SENTINEL.md'), 'do not delete');
    fs.writeFileSync(at('cfg/.eslintrc.json'), '{"rules":{}}');
    fs.writeFileSync(at('notes.txt'), 'notes');
    fs.writeFileSync(at('hook'), '#!/bin/sh\n');
    fs.chmodSync(at('hook'), 0o644);
    fs.symlinkSync('notes.txt', at('link'));
    for (const name of ['SENTINEL.md', 'cfg/.eslintrc.json', 'notes.txt']) fs.chmodSync(at(name), 0o644);
  });
  afterEach(() => removeDir(root));

  it('finds nothing in an untouched tree, and is complete', () => {
    const set = diffManifests(takeManifest(root), takeManifest(root));
    assert.deepEqual(set.changes, []);
    assert.deepEqual(set.undecided, []);
    assert.deepEqual(set.coverage, { complete: true, reasons: [], gaps: [] });
  });

  it('reports a deletion, a modification and a creation with the entries on each side', () => {
    const baseline = takeManifest(root);
    fs.rmSync(at('SENTINEL.md'));
    fs.writeFileSync(at('cfg/.eslintrc.json'), '{"rules":{"no-eval":"off"}}');
    fs.mkdirSync(at('.vscode'));
    fs.writeFileSync(at('.vscode/tasks.json'), '{}');
    const set = diffManifests(baseline, takeManifest(root));
    assert.deepEqual(
      set.changes.map((change) => [change.kind, change.uri]),
      [
        ['created', '/.vscode'],
        ['created', '/.vscode/tasks.json'],
        ['deleted', '/SENTINEL.md'],
        ['modified', '/cfg/.eslintrc.json'],
      ],
    );
    const deleted = set.changes.find((change) => change.kind === 'deleted');
    assert.deepEqual(deleted?.before, {
      uri: '/SENTINEL.md',
      type: 'file',
      sizeBytes: 13,
      sha256: sha('do not delete'),
      mode: 0o644,
      linkTarget: null,
    });
    assert.equal(deleted?.after, null);
    assert.deepEqual(countChanges(set), { created: 2, modified: 1, deleted: 1, mode_changed: 0 });
    assert.equal(set.coverage.complete, true);
  });

  it('shows a rename as a deletion plus a creation that names where the file moved from', () => {
    const baseline = takeManifest(root);
    fs.renameSync(at('notes.txt'), at('cfg/moved.txt'));
    const set = diffManifests(baseline, takeManifest(root));
    const created = set.changes.find((change) => change.uri === '/cfg/moved.txt');
    assert.equal(created?.kind, 'created');
    assert.equal(created?.movedFrom, '/notes.txt');
    assert.equal(set.changes.find((change) => change.uri === '/notes.txt')?.kind, 'deleted');
  });

  it('reports a type change (file to directory, file to symlink) as modified', () => {
    const baseline = takeManifest(root);
    fs.rmSync(at('SENTINEL.md'));
    fs.mkdirSync(at('SENTINEL.md'));
    fs.rmSync(at('notes.txt'));
    fs.symlinkSync('/etc/passwd', at('notes.txt'));
    const set = diffManifests(baseline, takeManifest(root));
    assert.deepEqual(
      set.changes.map((change) => [change.kind, change.uri, change.before?.type, change.after?.type]),
      [
        ['modified', '/SENTINEL.md', 'file', 'directory'],
        ['modified', '/notes.txt', 'file', 'symlink'],
      ],
    );
  });

  it('reports a retargeted symlink as modified, and never reads through it', () => {
    const baseline = takeManifest(root);
    fs.rmSync(at('link'));
    fs.symlinkSync('SENTINEL.md', at('link'));
    const set = diffManifests(baseline, takeManifest(root));
    assert.deepEqual(
      set.changes.map((change) => [
        change.kind,
        change.uri,
        change.before?.linkTarget,
        change.after?.linkTarget,
      ]),
      [['modified', '/link', 'notes.txt', 'SENTINEL.md']],
    );
  });

  it('reports a chmod alone as mode_changed, and content plus mode as modified', () => {
    const baseline = takeManifest(root);
    fs.chmodSync(at('hook'), 0o755);
    fs.writeFileSync(at('notes.txt'), 'changed');
    fs.chmodSync(at('notes.txt'), 0o600);
    const set = diffManifests(baseline, takeManifest(root));
    assert.deepEqual(
      set.changes.map((change) => [change.kind, change.uri, change.before?.mode, change.after?.mode]),
      [
        ['mode_changed', '/hook', 0o644, 0o755],
        ['modified', '/notes.txt', 0o644, 0o600],
      ],
    );
  });

  it('leaves a file read without a digest undecided when its size is the same, modified when not', () => {
    fs.writeFileSync(at('big.bin'), 'a'.repeat(100));
    fs.writeFileSync(at('grows.bin'), 'b'.repeat(100));
    const limits = { maxReadBytes: 60 };
    const baseline = takeManifest(root, { limits });
    fs.writeFileSync(at('big.bin'), 'c'.repeat(100));
    fs.writeFileSync(at('grows.bin'), 'b'.repeat(120));
    const set = diffManifests(baseline, takeManifest(root, { limits }));
    assert.equal(set.coverage.complete, false);
    assert.ok(set.coverage.reasons.includes('read_limit_exceeded'));
    assert.ok(set.undecided.includes('/big.bin'));
    assert.equal(set.changes.find((change) => change.uri === '/grows.bin')?.kind, 'modified');
    assert.equal(
      set.changes.find((change) => change.uri === '/big.bin'),
      undefined,
      'never reported as unchanged or changed without proof',
    );
  });

  it('never calls an entry deleted when the final manifest could not list its directory; carries the gaps', () => {
    const baseline = takeManifest(root);
    const failing: SurfaceFs = {
      ...nodeSurfaceFs,
      openListing: (dirFd) => {
        if (nodeSurfaceFs.handlePath(dirFd).toString().endsWith('/cfg'))
          throw Object.assign(new Error('denied'), { code: 'EACCES' });
        return nodeSurfaceFs.openListing(dirFd);
      },
    };
    fs.rmSync(at('SENTINEL.md'));
    const set = diffManifests(baseline, takeManifest(root, { fs: failing }));
    assert.deepEqual(set.undecided, ['/cfg/.eslintrc.json']);
    assert.deepEqual(
      set.changes.map((change) => [change.kind, change.uri]),
      [['deleted', '/SENTINEL.md']],
    );
    assert.deepEqual(set.coverage, {
      complete: false,
      reasons: ['listing_failed'],
      gaps: [
        {
          reason: 'listing_failed',
          uri: '/cfg',
          detail: 'final manifest: the directory could not be opened for listing (EACCES)',
        },
      ],
    });
  });

  it('never calls an entry created when the baseline stopped at its file budget', () => {
    const baseline = takeManifest(root, { limits: { maxFiles: 2 } });
    const set = diffManifests(baseline, takeManifest(root));
    assert.deepEqual(set.changes, []);
    assert.ok(set.undecided.length > 0);
    assert.deepEqual(set.coverage.reasons, ['file_limit_exceeded']);
  });
});
