import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { loadCampaignFile } from '../../src/attacks/campaign-file.js';
import { openMemory } from '../../src/memory/open-memory.js';
import { runWorker } from '../../src/queue/queue-worker.js';
import { submitRun } from '../../src/queue/submit-run.js';
import { createTarget } from '../../src/targets/create-target.js';
import { freshDatabase, PG_SKIP, query, removeCampaigns, waitFor, writeCampaign } from './queue-fixture.js';

/**
 * An idle worker is woken by the submitter's NOTIFY: with a poll interval far longer than the test, it
 * still takes a new run's attempts at once. The control (the same worker with listening off) shows the
 * test can tell: its attempts stay queued.
 */

const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  removeCampaigns();
  for (const cleanup of cleanups) await cleanup().catch(() => {});
});

const POLL_MS = 10 * 60_000;

async function idleWorker(url: string, listen: boolean) {
  const stop = new AbortController();
  let ready: () => void = () => {};
  const started = new Promise<void>((resolve) => {
    ready = resolve;
  });
  const taken: string[] = [];
  const finished = runWorker({
    url,
    env: {},
    listen,
    pollIntervalMs: POLL_MS,
    signal: stop.signal,
    log: (line) => {
      if (line.includes('taking attempts from')) ready();
    },
    onJobTiming: (timing) => taken.push(`${timing.job.attack}#${timing.job.attempt} ${timing.result}`),
  });
  cleanups.push(async () => {
    stop.abort();
    await finished;
  });
  await started;
  // Its first look at the (empty) queue happens right after start; give it time to be asleep.
  await new Promise((resolve) => setTimeout(resolve, 2000));
  return { stop, finished, taken };
}

async function submit(url: string) {
  const file = writeCampaign({ attempts: 1, delayMs: 0 });
  const campaign = await loadCampaignFile(file);
  const memory = await openMemory(url);
  try {
    return await submitRun({
      url,
      memory,
      campaignFile: file,
      campaign,
      target: createTarget(campaign.target, { env: {} }).identifier(),
    });
  } finally {
    await memory.close();
  }
}

describe('waking idle workers', { skip: PG_SKIP }, () => {
  it('an idle worker takes a new run at once when the submitter notifies, long before its next poll', async () => {
    const db = await freshDatabase();
    cleanups.push(db.drop);
    const worker = await idleWorker(db.url, true);
    const { run } = await submit(db.url);
    await waitFor('the worker to store both attempts', async () =>
      worker.taken.length === 2 ? true : undefined,
    );
    assert.deepEqual(worker.taken.sort(), ['ignore#1 done', 'obey#1 done']);
    const rows = await query<{ state: string }>(
      db.url,
      'select state from witness_queue.attempts where run_id = $1',
      [run.runId],
    );
    assert.deepEqual(
      rows.map((row) => row.state),
      ['done', 'done'],
    );
    worker.stop.abort();
    assert.equal((await worker.finished).done, 2);
  });

  it('control: the same worker not listening leaves the run queued until its poll', async () => {
    const db = await freshDatabase();
    cleanups.push(db.drop);
    const worker = await idleWorker(db.url, false);
    const { run } = await submit(db.url);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    assert.deepEqual(worker.taken, []);
    const rows = await query<{ state: string }>(
      db.url,
      'select state from witness_queue.attempts where run_id = $1',
      [run.runId],
    );
    assert.deepEqual(
      rows.map((row) => row.state),
      ['queued', 'queued'],
    );
    worker.stop.abort();
    assert.equal((await worker.finished).done, 0);
  });
});
