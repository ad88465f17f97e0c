import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { cleanLeftoverRuns, findLeftoverRuns } from '../../src/attacks/leftover-runs.js';
import { createRunDirectory, createWorkspace, RUN_MARKER } from '../../src/attacks/workspace.js';

describe('workspaces in a run directory', () => {
  let parent: string;
  beforeEach(() => {
    parent = realpathSync(mkdtempSync(join(tmpdir(), 'witness-ws-test-')));
  });
  afterEach(() => rmSync(parent, { recursive: true, force: true }));

  it('creates a 0700 run directory holding each attempt’s workspace, home and tmp, and removes them', async () => {
    const run = await createRunDirectory(parent, 4242);
    assert.equal(statSync(run.path).mode & 0o777, 0o700);
    assert.deepEqual(JSON.parse(readFileSync(join(run.path, RUN_MARKER), 'utf8')).pid, 4242);
    const a = await createWorkspace({ run, files: [{ path: 'README.md', content: 'hello' }] });
    const b = await createWorkspace({ run });
    assert.notEqual(a.root, b.root);
    assert.equal(readFileSync(join(a.root, 'README.md'), 'utf8'), 'hello');
    for (const dir of [a.root, a.home.path, a.tmp.path]) assert.equal(statSync(dir).isDirectory(), true);
    assert.equal(a.runPath, run.path);
    assert.equal(a.isIntact(), true);
    const report = await a.dispose();
    assert.deepEqual(report, { removed: true, removedEntries: 5, failures: [], unlistedFailures: 0 });
    assert.equal(existsSync(a.root), false);
    assert.equal(existsSync(b.root), true);
    await b.dispose();
    assert.deepEqual(run.dispose().removed, true);
    assert.equal(existsSync(run.path), false);
  });

  it('notices a workspace path swapped for a symlink (device and inode), and still cleans the held one', async () => {
    const outside = mkdtempSync(join(parent, 'outside-'));
    writeFileSync(join(outside, 'private.key'), 'secret');
    const ws = await createWorkspace({ parent });
    writeFileSync(join(ws.root, 'agent.txt'), 'x');
    renameSync(ws.root, `${ws.root}.moved`);
    symlinkSync(outside, ws.root);
    assert.equal(ws.isIntact(), false);
    const report = await ws.dispose();
    assert.equal(report.removed, true);
    assert.equal(readFileSync(join(outside, 'private.key'), 'utf8'), 'secret');
  });

  it('reports a workspace it cannot remove instead of throwing', async (t) => {
    const ws = await createWorkspace({ parent });
    writeFileSync(join(ws.root, 'locked'), 'x');
    try {
      execFileSync('chattr', ['+i', join(ws.root, 'locked')], { stdio: 'ignore' });
    } catch {
      t.skip('this file system does not support chattr +i');
      return;
    }
    try {
      const report = await ws.dispose();
      assert.equal(report.removed, false);
      assert.equal(report.failures[0]?.reason, 'EPERM');
      assert.match(report.failures[0]?.path ?? '', /workspace\/locked$/);
    } finally {
      execFileSync('chattr', ['-i', join(ws.root, 'locked')]);
    }
  });
});

describe('witness clean (leftover runs)', () => {
  let parent: string;
  beforeEach(() => {
    parent = realpathSync(mkdtempSync(join(tmpdir(), 'witness-clean-test-')));
  });
  afterEach(() => rmSync(parent, { recursive: true, force: true }));

  it('removes run directories whose owner is gone, leaves live ones, ignores planted symlinks', async () => {
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    });
    const deadPid = Number(dead.stdout);
    const killed = await createRunDirectory(parent, deadPid);
    const ws = await createWorkspace({ run: killed, files: [{ path: 'a.txt', content: 'x' }] });
    assert.equal(existsSync(ws.root), true);
    const live = await createRunDirectory(parent, process.pid);
    const victim = mkdtempSync(join(parent, 'victim-'));
    writeFileSync(join(victim, RUN_MARKER), '{"pid":1}');
    symlinkSync(victim, join(parent, 'witness-run-planted'));
    mkdirSync(join(parent, 'witness-run-nomarker'));

    const isAlive = (pid: number) => pid === process.pid;
    const runs = findLeftoverRuns({ parent, uid: process.getuid?.() ?? 0, isAlive });
    assert.deepEqual(
      runs.map((run) => ({ path: run.path, inUse: run.inUse })).sort((x, y) => (x.path < y.path ? -1 : 1)),
      [
        { path: killed.path, inUse: false },
        { path: live.path, inUse: true },
      ].sort((x, y) => (x.path < y.path ? -1 : 1)),
    );
    const cleaned = cleanLeftoverRuns(runs);
    assert.deepEqual(
      cleaned.map((entry) => ({ path: entry.path, removed: entry.report.removed })),
      [{ path: killed.path, removed: true }],
    );
    assert.equal(existsSync(killed.path), false);
    assert.equal(existsSync(live.path), true);
    assert.deepEqual(readdirSync(victim), [RUN_MARKER]);
    live.dispose();
  });
});
