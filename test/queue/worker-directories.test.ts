import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { sweepWorkerDirectories, workerDirectoryPrefix } from '../../src/queue/worker-directories.js';

const uid = process.getuid?.() ?? -1;
const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** The pid of a process that has exited (and been reaped), so nobody owns it now. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', '']);
  assert.equal(child.status, 0);
  assert.ok(child.pid !== undefined && !isAlive(child.pid));
  return child.pid;
}

const roots: string[] = [];
after(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

function scene() {
  const root = mkdtempSync(path.join(tmpdir(), 'witness-sweep-test-'));
  roots.push(root);
  const parent = path.join(root, 'tmp');
  mkdirSync(parent);
  // What the agents and the attacker must not be able to make a sweep delete.
  const victim = path.join(root, 'victim');
  mkdirSync(victim);
  writeFileSync(path.join(victim, 'precious.txt'), 'keep me\n');
  return { parent, victim };
}

function workerDirectory(parent: string, pid: number, suffix = 'AbC123'): string {
  const dir = path.join(parent, `${workerDirectoryPrefix(pid)}${suffix}`);
  mkdirSync(path.join(dir, 'agents'), { recursive: true });
  writeFileSync(path.join(dir, 'campaign.yaml'), 'name: x\n');
  return dir;
}

describe('sweeping the campaign directories of killed workers', () => {
  it("removes a dead worker's directory and leaves a live worker's", () => {
    const { parent } = scene();
    const dead = deadPid();
    const gone = workerDirectory(parent, dead);
    const alive = workerDirectory(parent, process.pid);
    const swept = sweepWorkerDirectories({ parent, uid, isAlive });
    assert.deepEqual(
      swept.map((entry) => [entry.path, entry.pid, entry.report.removed]),
      [[gone, dead, true]],
    );
    assert.equal(existsSync(gone), false);
    assert.equal(existsSync(alive), true);
  });

  it('does not follow a symlink inside a dead directory (an agent planted it to delete the victim)', () => {
    const { parent, victim } = scene();
    const gone = workerDirectory(parent, deadPid());
    symlinkSync(victim, path.join(gone, 'agents', 'escape'));
    const [entry] = sweepWorkerDirectories({ parent, uid, isAlive });
    assert.equal(entry?.report.removed, true);
    assert.equal(existsSync(gone), false);
    assert.equal(existsSync(path.join(victim, 'precious.txt')), true);
  });

  it('leaves a symlink named like a worker directory alone (planted in the shared temp directory)', () => {
    const { parent, victim } = scene();
    const planted = path.join(parent, `${workerDirectoryPrefix(deadPid())}Zz9999`);
    symlinkSync(victim, planted);
    assert.deepEqual(sweepWorkerDirectories({ parent, uid, isAlive }), []);
    assert.equal(existsSync(planted), true);
    assert.equal(existsSync(path.join(victim, 'precious.txt')), true);
  });

  it("leaves another user's directories and names that are not a worker's", () => {
    const { parent } = scene();
    const dead = deadPid();
    const other = workerDirectory(parent, dead);
    const odd = [`witness-worker-x${dead}-AbC123`, `witness-worker-${dead}-short`, 'witness-worker-0-AbC123'];
    for (const name of odd) mkdirSync(path.join(parent, name));
    assert.deepEqual(sweepWorkerDirectories({ parent, uid: uid + 1, isAlive }), []);
    assert.equal(existsSync(other), true);
    const swept = sweepWorkerDirectories({ parent, uid, isAlive });
    assert.deepEqual(
      swept.map((entry) => entry.path),
      [other],
    );
    for (const name of odd) assert.equal(existsSync(path.join(parent, name)), true, name);
  });

  it('finds nothing in a parent that does not exist', () => {
    assert.deepEqual(sweepWorkerDirectories({ parent: '/nonexistent-witness-parent', uid, isAlive }), []);
  });
});
