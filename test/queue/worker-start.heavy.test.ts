import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import {
  freshDatabase,
  PG_SKIP,
  query,
  removeCampaigns,
  startWorker,
  type WorkerProcess,
} from './queue-fixture.js';

/**
 * A worker starting on a fresh database, beside others starting at the same moment, must get ready; one
 * that cannot start must exit with its error. Seen in CI: three workers starting together on a fresh
 * database, pg-boss's creation of the attempt queue failed one of them with "deadlock detected", and that
 * worker printed the error but never exited: its started pg-boss kept supervising on timers, and the
 * bench waiting for it hung for twenty minutes.
 */

const started: WorkerProcess[] = [];
const drops: Array<() => Promise<void>> = [];
after(async () => {
  for (const worker of started) worker.child.kill('SIGKILL');
  for (const drop of drops) await drop().catch(() => {});
  removeCampaigns();
});

/** Resolves with the worker's exit code, or 'alive' when it is still running after `ms`. */
function exitWithin(worker: WorkerProcess, ms: number): Promise<number | null | 'alive'> {
  return Promise.race([
    worker.exited,
    new Promise<'alive'>((resolve) => setTimeout(() => resolve('alive'), ms)),
  ]);
}

async function untilReady(worker: WorkerProcess, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (worker.stderr().includes('taking attempts from')) return true;
    if (worker.child.exitCode !== null) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

describe('witness worker start-up', { skip: PG_SKIP }, () => {
  it('three workers starting together on fresh databases all get ready (ten databases)', async () => {
    for (let round = 0; round < 10; round++) {
      const db = await freshDatabase();
      drops.push(db.drop);
      const workers = [startWorker(db.url), startWorker(db.url), startWorker(db.url)];
      started.push(...workers);
      for (const worker of workers) {
        assert.ok(
          await untilReady(worker, 60_000),
          `round ${round}: a worker never got ready:\n${worker.stderr()}`,
        );
      }
      for (const worker of workers) worker.child.kill('SIGINT');
      for (const worker of workers) assert.equal(await exitWithin(worker, 60_000), 0, worker.stderr());
    }
  });

  it('a worker that cannot create the attempt queue exits with its error, never staying alive', async () => {
    const db = await freshDatabase();
    drops.push(db.drop);
    // A first worker sets the database up, and stops.
    const first = startWorker(db.url);
    started.push(first);
    assert.ok(await untilReady(first, 60_000), first.stderr());
    first.child.kill('SIGINT');
    assert.equal(await exitWithin(first, 60_000), 0, first.stderr());
    // pg-boss forgets the queue but keeps its table, so every try at creating the queue again fails.
    await query(db.url, 'delete from witness_boss.queue');
    const second = startWorker(db.url);
    started.push(second);
    const code = await exitWithin(second, 60_000);
    assert.notEqual(code, 'alive', `the worker is still running:\n${second.stderr()}`);
    assert.equal(code, 1, 'an unexpected failure (exit-status.ts)');
    assert.match(second.stderr(), /already exists/);
    assert.ok(!second.stderr().includes('taking attempts from'));
  });
});
