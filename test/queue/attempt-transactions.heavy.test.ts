import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { loadCampaignFile } from '../../src/attacks/campaign-file.js';
import { openMemory } from '../../src/memory/open-memory.js';
import { takeNextAttempt } from '../../src/queue/attempt-transactions.js';
import { startBoss } from '../../src/queue/boss.js';
import { openQueueDb } from '../../src/queue/queue-store.js';
import { submitRun } from '../../src/queue/submit-run.js';
import { createTarget } from '../../src/targets/create-target.js';
import {
  freshDatabase,
  PG_SKIP,
  query,
  removeCampaigns,
  withClient,
  writeCampaign,
} from './queue-fixture.js';

/**
 * Taking an attempt against the real PostgreSQL: a take that meets an attempt row locked by a worker
 * storing its result backs off whole (no deadlock, the job untouched), and a job whose attempt already
 * ended is completed without running it.
 */

const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  removeCampaigns();
  for (const cleanup of cleanups) await cleanup().catch(() => {});
});

async function queuedRun() {
  const db = await freshDatabase();
  cleanups.push(db.drop);
  const file = writeCampaign({ attempts: 1, delayMs: 0 });
  const campaign = await loadCampaignFile(file);
  const memory = await openMemory(db.url);
  try {
    const { run } = await submitRun({
      url: db.url,
      memory,
      campaignFile: file,
      campaign,
      target: createTarget(campaign.target, { env: {} }).identifier(),
    });
    const queue = await openQueueDb(db.url);
    const boss = await startBoss(db.url, { supervise: false });
    cleanups.push(async () => {
      await boss.stop({ graceful: false, wait: true });
      await queue.close();
    });
    return { url: db.url, runId: run.runId, queue, boss };
  } finally {
    await memory.close();
  }
}

const jobStates = async (url: string) =>
  (
    await query<{ state: string }>(url, "select state from witness_boss.job where name = 'witness-attempts'")
  ).map((row) => row.state);

describe('taking an attempt', { skip: PG_SKIP }, () => {
  it('backs off whole when the attempt row is locked by a worker storing its result, then takes it', async () => {
    const { url, queue, boss } = await queuedRun();
    await withClient(url, async (storing) => {
      // Another worker's completion transaction holds both attempt rows.
      await storing.query('begin');
      await storing.query('select 1 from witness_queue.attempts for update');
      const taken = await takeNextAttempt(queue.db, boss, 'w1', 15_000);
      assert.deepEqual(taken, { kind: 'busy' });
      // Rolled back whole: the fetched job is waiting again, nothing is running.
      assert.deepEqual(await jobStates(url), ['created', 'created']);
      await storing.query('rollback');
    });
    const taken = await takeNextAttempt(queue.db, boss, 'w1', 15_000);
    assert.equal(taken?.kind, 'claimed');
    const rows = await query<{ state: string; worker: string | null; tries: number }>(
      url,
      "select state, worker, tries from witness_queue.attempts where state = 'running'",
    );
    assert.deepEqual(rows, [{ state: 'running', worker: 'w1', tries: 1 }]);
    assert.deepEqual((await jobStates(url)).sort(), ['active', 'created']);
  });

  it('completes the job of an attempt that already ended without claiming it, and reports an empty queue', async () => {
    const { url, queue, boss } = await queuedRun();
    await query(url, "update witness_queue.attempts set state = 'done'");
    const first = await takeNextAttempt(queue.db, boss, 'w1', 15_000);
    const second = await takeNextAttempt(queue.db, boss, 'w1', 15_000);
    assert.deepEqual([first?.kind, second?.kind], ['final', 'final']);
    assert.equal(await takeNextAttempt(queue.db, boss, 'w1', 15_000), undefined);
    assert.deepEqual(await jobStates(url), ['completed', 'completed']);
    const tries = await query<{ tries: number }>(url, 'select tries from witness_queue.attempts');
    assert.deepEqual(tries, [{ tries: 0 }, { tries: 0 }]);
  });
});
