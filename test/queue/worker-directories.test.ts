import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { directoryLocksUnavailable } from '../../src/attacks/directory-lock.js';
import { cleanLeftoverRuns, findLeftoverRuns } from '../../src/attacks/leftover-runs.js';
import { createRunDirectory } from '../../src/attacks/workspace.js';
import {
  createWorkerDirectory,
  sweepWorkerDirectories,
  workerDirectoryPrefix,
} from '../../src/queue/worker-directories.js';

const uid = process.getuid?.() ?? -1;
const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * The pid of a process that has exited (and been reaped), so nobody owns it now. `true`, not node: any
 * process gives a pid, and a node start costs a tenth of a second of CPU.
 */
function deadPid(): number {
  const child = spawnSync('true');
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

const NO_LOCKS = directoryLocksUnavailable();

/**
 * A live worker in another process: it makes a worker directory named with `ownerPid` (any number: the
 * pid it would have in its own pid namespace), writes a file into it, prints its path and stays alive.
 */
async function liveWorker(parent: string, ownerPid: number) {
  const moduleUrl = new URL('../../src/queue/worker-directories.js', import.meta.url).href;
  const script = `const { createWorkerDirectory } = await import(${JSON.stringify(moduleUrl)});
const { writeFileSync } = await import('node:fs');
const directory = createWorkerDirectory(${JSON.stringify(parent)}, ${ownerPid});
writeFileSync(directory.path + '/campaign.yaml', 'name: live\\n');
process.stdout.write(directory.path + '\\n');
setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit');
  const [line] = (await once(child.stdout, 'data')) as [Buffer];
  const directory = line.toString('utf8').trim();
  return {
    directory,
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

describe("a live worker's directories are never swept, whatever its pid says", { skip: NO_LOCKS }, () => {
  it('two live workers with colliding pids, both looking dead: both kept; the one killed is then removed', async () => {
    const { parent } = scene();
    // The attack on the old pid rule: the pid in the names means nothing here (another pid namespace, a
    // reused pid), so the sweep is told every pid is gone. Only the lock can tell.
    const gone = () => false;
    const first = await liveWorker(parent, 4242);
    const second = await liveWorker(parent, 4242);
    try {
      assert.deepEqual(sweepWorkerDirectories({ parent, uid, isAlive: gone }), []);
      assert.equal(existsSync(path.join(first.directory, 'campaign.yaml')), true);
      assert.equal(existsSync(path.join(second.directory, 'campaign.yaml')), true);
      await first.kill();
      const swept = sweepWorkerDirectories({ parent, uid, isAlive: gone });
      assert.deepEqual(
        swept.map((entry) => [entry.path, entry.pid, entry.report.removed]),
        [[first.directory, 4242, true]],
      );
      assert.equal(existsSync(path.join(second.directory, 'campaign.yaml')), true);
    } finally {
      await first.kill();
      await second.kill();
    }
  });

  it("a dead worker's directory whose pid is alive again (reused) is kept, not guessed at", async () => {
    const { parent } = scene();
    // Its owner dies (the kernel drops its lock), and its pid now names a live process: this one.
    const dead = await liveWorker(parent, process.pid);
    await dead.kill();
    assert.deepEqual(sweepWorkerDirectories({ parent, uid, isAlive }), []);
    assert.equal(existsSync(dead.directory), true);
    // Once the pid is gone too, it goes.
    const swept = sweepWorkerDirectories({ parent, uid, isAlive: () => false });
    assert.deepEqual(
      swept.map((entry) => entry.path),
      [dead.directory],
    );
  });

  it('a worker directory is locked before anything is written into it, and removal lets go of it', async () => {
    const { parent } = scene();
    const made = createWorkerDirectory(parent, 4242);
    assert.equal(made.locked, true);
    writeFileSync(path.join(made.path, 'campaign.yaml'), 'name: x\n');
    assert.deepEqual(sweepWorkerDirectories({ parent, uid, isAlive: () => false }), []);
    await made.remove();
    assert.deepEqual(readdirSync(parent), []);
  });

  it("witness clean leaves a worker's run directory while its lock is held, even with a dead-looking pid", async () => {
    const { parent } = scene();
    const held = await createRunDirectory(parent, 2 ** 22 + 4242, { ownerLock: true });
    writeFileSync(path.join(held.path, 'left.txt'), 'x');
    const [found] = findLeftoverRuns({ parent, uid, isAlive: () => false });
    assert.equal(found?.inUse, true, 'in use while its owner holds the lock');
    assert.deepEqual(cleanLeftoverRuns(found === undefined ? [] : [found]), []);
    assert.equal(existsSync(path.join(held.path, 'left.txt')), true);
    // Its owner lets go (as its death would): now it is a leftover.
    held.release();
    const [left] = findLeftoverRuns({ parent, uid, isAlive: () => false });
    assert.equal(left?.inUse, false);
    assert.equal(cleanLeftoverRuns(left === undefined ? [] : [left])[0]?.report.removed, true);
  });
});
