import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { loadCampaignFile } from '../../src/attacks/campaign-file.js';
import { openMemory } from '../../src/memory/open-memory.js';
import { openQueueDb } from '../../src/queue/queue-store.js';
import { runWorker } from '../../src/queue/queue-worker.js';
import { readRunStatus } from '../../src/queue/run-status.js';
import { submitRun } from '../../src/queue/submit-run.js';
import { createTarget } from '../../src/targets/create-target.js';
import { freshDatabase, PG_SKIP, query, removeCampaigns, waitFor, writeCampaign } from './queue-fixture.js';

/**
 * Resubmitting a run (`--run-id`) finishes it: attempts whose job pg-boss gave up on (retries used up)
 * get another try, and still end with exactly one result each.
 */

const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  removeCampaigns();
  for (const cleanup of cleanups) await cleanup().catch(() => {});
});

async function shownStates(url: string, runId: string): Promise<string[]> {
  const queue = await openQueueDb(url, { max: 1 });
  try {
    return (await readRunStatus(queue.db, runId)).attempts.map((attempt) => attempt.state);
  } finally {
    await queue.close();
  }
}

describe('resubmitting a queued run', { skip: PG_SKIP }, () => {
  it('gives attempts whose retries were used up another try, and stores one result each', async () => {
    const db = await freshDatabase();
    cleanups.push(db.drop);
    const file = writeCampaign({ attempts: 1, delayMs: 5000, attemptTimeoutMs: 60_000, control: true });
    const campaign = await loadCampaignFile(file);
    const target = createTarget(campaign.target, { env: {} }).identifier();
    const submit = async (runId?: string) => {
      const memory = await openMemory(db.url);
      try {
        return await submitRun({
          url: db.url,
          memory,
          campaignFile: file,
          campaign,
          target,
          runId,
          retryLimit: 0,
        });
      } finally {
        await memory.close();
      }
    };
    const { run } = await submit();
    // The stored run says which attack is a control, as a local run's does (reports leave controls out).
    const stored = await query<{ record_json: { attacks: Array<{ id: string; control?: boolean }> } }>(
      db.url,
      'select record_json::jsonb as record_json from runs where id = $1',
      [run.runId],
    );
    assert.deepEqual(
      stored[0]?.record_json.attacks.map((attack) => [attack.id, attack.control ?? false]),
      [
        ['obey', false],
        ['ignore', true],
      ],
    );
    // A worker stopped mid-attempt hands both attempts back; with no retries left, pg-boss gives up.
    const stop = new AbortController();
    const stopped = runWorker({ url: db.url, env: {}, concurrency: 2, signal: stop.signal });
    cleanups.push(async () => {
      stop.abort();
      await stopped;
    });
    await waitFor('both attempts to run', async () => {
      const rows = await query<{ state: string }>(
        db.url,
        'select state from witness_queue.attempts where run_id = $1',
        [run.runId],
      );
      return rows.every((row) => row.state === 'running') ? true : undefined;
    });
    stop.abort();
    assert.equal((await stopped).failed, 2);
    assert.deepEqual(await shownStates(db.url, run.runId), ['failed', 'failed']);

    const again = await submit(run.runId);
    assert.deepEqual([again.enqueued, again.retried, again.total], [0, 2, 2]);
    assert.deepEqual(await shownStates(db.url, run.runId), ['retried', 'retried']);

    const summary = await runWorker({ url: db.url, env: {}, concurrency: 2, idleExitMs: 1000 });
    assert.equal(summary.done, 2);
    assert.deepEqual(await shownStates(db.url, run.runId), ['done', 'done']);
    const results = await query<{ attack: string; outcome: string }>(
      db.url,
      'select attack, outcome from attack_results where run_id = $1 order by attack',
      [run.runId],
    );
    assert.deepEqual(results, [
      { attack: 'ignore', outcome: 'failure' },
      { attack: 'obey', outcome: 'success' },
    ]);
    // A third submission finds nothing left to do.
    const third = await submit(run.runId);
    assert.deepEqual([third.enqueued, third.retried], [0, 0]);
  });
});
