import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { loadCampaignFile } from '../../src/attacks/campaign-file.js';
import { openMemory } from '../../src/memory/open-memory.js';
import type { AttackResult } from '../../src/models/attack-result.js';
import {
  LeaseKeeper,
  LeaseLost,
  RunCancelled,
  renewLeases,
  sweepLapsedLeases,
} from '../../src/queue/attempt-lease.js';
import {
  completeWithResult,
  finishWithout,
  handBack,
  type Taken,
  takeNextAttempt,
} from '../../src/queue/attempt-transactions.js';
import { startBoss } from '../../src/queue/boss.js';
import { openQueueDb } from '../../src/queue/queue-store.js';
import { runWorker } from '../../src/queue/queue-worker.js';
import { readRunStatus } from '../../src/queue/run-status.js';
import { submitRun } from '../../src/queue/submit-run.js';
import { createTarget } from '../../src/targets/create-target.js';
import { runCli } from '../support/cli.js';
import {
  freshDatabase,
  PG_SKIP,
  query,
  removeCampaigns,
  waitFor,
  withClient,
  writeCampaign,
} from './queue-fixture.js';

/**
 * The lease on a running attempt, against the real PostgreSQL, with the clock moved by hand (a lease is
 * made to lapse by moving its renewal into the past, never by waiting): a lapsed lease is swept back to
 * the queue with pg-boss's retry accounting, the worker that lost it can store, finish or hand back
 * nothing, a fresh or locked one is left alone, and a worker's keeper stops an attempt whose lease is
 * gone or whose run was cancelled.
 */

const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const cleanup of cleanups) await cleanup().catch(() => {});
  removeCampaigns();
});

const LEASE_MS = 15_000;

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
    return { url: db.url, run, queue, boss };
  } finally {
    await memory.close();
  }
}

type Claimed = Extract<Taken, { kind: 'claimed' }>;

/** Takes attempts until `obey` #1 is claimed (the other attack's job may come first). */
async function takeObey(scene: Awaited<ReturnType<typeof queuedRun>>, worker: string): Promise<Claimed> {
  for (;;) {
    const taken = await takeNextAttempt(scene.queue.db, scene.boss, worker, LEASE_MS);
    assert.ok(taken !== undefined, 'a job to take');
    if (taken.kind === 'claimed' && taken.job.attack === 'obey') return taken;
  }
}

/** The lease lapses: its last renewal moves an hour into the past (the database's clock decides). */
const lapse = (url: string, lease: string) =>
  query(
    url,
    "update witness_queue.attempts set lease_renewed_at = now() - interval '1 hour' where lease = $1",
    [lease],
  );

const obeyRow = async (url: string) =>
  (
    await query<{
      state: string;
      tries: number;
      worker: string | null;
      lease: string | null;
      error: string | null;
    }>(
      url,
      "select state, tries, worker, lease::text as lease, error from witness_queue.attempts where attack = 'obey'",
    )
  )[0];

const obeyJob = async (url: string) =>
  (
    await query<{ state: string; retry_count: number }>(
      url,
      "select j.state, j.retry_count from witness_boss.job j join witness_queue.attempts a on a.job_id = j.id where a.attack = 'obey'",
    )
  )[0];

/** A valid `error` result of `obey` #1, on a conversation stored for it. */
async function resultFor(
  url: string,
  run: { runId: string; campaign: string },
  id: string,
): Promise<AttackResult> {
  const memory = await openMemory(url);
  try {
    const conversation = await memory.createConversation();
    return {
      id,
      campaign: run.campaign,
      attack: 'obey',
      attempt: 1,
      conversationId: conversation.id,
      outcome: 'error',
      scoreId: null,
      target: null,
      workspace: null,
      reply: null,
      error: 'made up by the test',
      createdAt: new Date().toISOString(),
      runId: run.runId,
      metadata: {},
    };
  } finally {
    await memory.close();
  }
}

describe('the lease on a running attempt', { skip: PG_SKIP }, () => {
  it('a lapsed lease goes back to the queue with a retry; the worker that lost it stores nothing', async () => {
    const scene = await queuedRun();
    const { url, queue, boss, run } = scene;
    const first = await takeObey(scene, 'w1');
    const renewed = await renewLeases(queue.db, [first]);
    assert.deepEqual([...renewed.held.keys()], [first.lease]);
    // A fresh lease is not swept.
    assert.deepEqual(await sweepLapsedLeases(queue.db, boss), []);
    assert.equal((await obeyRow(url))?.state, 'running');

    await lapse(url, first.lease);
    const swept = await sweepLapsedLeases(queue.db, boss);
    assert.deepEqual(swept, [{ job: first.job, worker: 'w1' }]);
    const row = await obeyRow(url);
    assert.equal(row?.state, 'queued');
    assert.equal(row?.lease, null);
    assert.match(row?.error ?? '', /its worker w1 stopped renewing its lease/);
    // pg-boss's own retry accounting: the job waits as `retry`, and its next start counts a retry.
    assert.equal((await obeyJob(url))?.state, 'retry');
    assert.equal((await renewLeases(queue.db, [first])).held.size, 0, 'the lost lease is not renewed');

    const second = await takeObey(scene, 'w2');
    assert.notEqual(second.lease, first.lease);
    assert.deepEqual(await obeyJob(url), { state: 'active', retry_count: 1 });
    // The worker that lost the lease finishes its attempt: nothing of it is stored, its job is untouched.
    const stale = { job: first.job, jobId: first.jobId, lease: first.lease };
    assert.equal(
      await completeWithResult(queue.db, boss, stale, 'w1', await resultFor(url, run, 'r-lost')),
      false,
    );
    assert.equal(await finishWithout(queue.db, boss, stale, 'cancelled', 'late'), false);
    await handBack(queue.db, boss, stale, 'late hand-back');
    assert.deepEqual(
      { state: (await obeyRow(url))?.state, lease: (await obeyRow(url))?.lease },
      { state: 'running', lease: second.lease },
    );
    assert.equal((await obeyJob(url))?.state, 'active');
    // The holder stores exactly one result.
    const fresh = { job: second.job, jobId: second.jobId, lease: second.lease };
    assert.equal(
      await completeWithResult(queue.db, boss, fresh, 'w2', await resultFor(url, run, 'r-kept')),
      true,
    );
    const results = await query<{ id: string }>(url, 'select id from attack_results where run_id = $1', [
      run.runId,
    ]);
    assert.deepEqual(results, [{ id: 'r-kept' }]);
    assert.deepEqual(
      { state: (await obeyRow(url))?.state, tries: (await obeyRow(url))?.tries },
      { state: 'done', tries: 2 },
    );
    assert.equal((await obeyJob(url))?.state, 'completed');
  });

  it('retries used up: the sweep fails the job for good, and `runs show` says failed', async () => {
    const scene = await queuedRun();
    const { url, queue, boss, run } = scene;
    // The queue's retry limit is 3: the fourth lost lease is the last.
    for (let lost = 1; lost <= 4; lost++) {
      const taken = await takeObey(scene, `w${lost}`);
      await lapse(url, taken.lease);
      assert.equal((await sweepLapsedLeases(queue.db, boss)).length, 1);
      assert.equal((await obeyJob(url))?.state, lost < 4 ? 'retry' : 'failed', `after lost lease ${lost}`);
    }
    const status = await readRunStatus(queue.db, run.runId);
    const obey = status.attempts.find((attempt) => attempt.attack === 'obey');
    assert.equal(obey?.state, 'failed');
    assert.equal(obey?.tries, 4);
  });

  it('the sweep skips an attempt whose row is locked (its worker is storing the result), then takes it', async () => {
    const scene = await queuedRun();
    const { url, queue, boss } = scene;
    const taken = await takeObey(scene, 'w1');
    await lapse(url, taken.lease);
    await withClient(url, async (storing) => {
      await storing.query('begin');
      await storing.query("select 1 from witness_queue.attempts where attack = 'obey' for update");
      assert.deepEqual(await sweepLapsedLeases(queue.db, boss), []);
      await storing.query('rollback');
    });
    assert.equal((await sweepLapsedLeases(queue.db, boss)).length, 1);
  });

  it('runs show: a running attempt shows its lease age and when it would be retried', async () => {
    const scene = await queuedRun();
    const { queue, run } = scene;
    await takeObey(scene, 'w1');
    const status = await readRunStatus(queue.db, run.runId);
    const obey = status.attempts.find((attempt) => attempt.attack === 'obey');
    assert.equal(obey?.state, 'running');
    const lease = obey?.lease;
    assert.ok(lease !== null && lease !== undefined);
    assert.ok(lease.renewedSecondsAgo >= 0 && lease.renewedSecondsAgo < 15, String(lease.renewedSecondsAgo));
    // Lost now: the rest of its 15 s lease, then at most one 5 s sweep.
    assert.ok(lease.backIfLostWithinSeconds > 5 && lease.backIfLostWithinSeconds <= 20);
    // Stuck: the job's expiry, attemptTimeoutMs 5 s + the default 120 s grace.
    assert.ok(lease.jobExpiresInSeconds !== null && lease.jobExpiresInSeconds <= 125);
    // `ignore` was claimed first, or waits: only a running attempt has a lease.
    const ignore = status.attempts.find((attempt) => attempt.attack === 'ignore');
    assert.equal(ignore?.lease === null, ignore?.state !== 'running');
    // The table prints it.
    const shown = await runCli(['runs', 'show', run.runId, '--db', scene.url]);
    assert.equal(shown.status, 0, shown.stderr);
    assert.match(
      shown.stdout,
      /obey\s+1\s+running\s+1\s+w1\s+renewed \d+(\.\d)?s ago\s+within \d+s if its worker is lost, \d+s if it is stuck/,
    );
  });
});

describe("a worker's lease keeper", { skip: PG_SKIP }, () => {
  it('stops an attempt whose lease was taken by another worker, and one whose run was cancelled', async () => {
    const scene = await queuedRun();
    const { url, queue, boss } = scene;
    const timing = { renewEveryMs: 60_000, lapseMs: LEASE_MS, sweepEveryMs: 60_000 };
    const keeper = new LeaseKeeper(queue.db, boss, timing, () => {});
    const first = await takeObey(scene, 'w1');
    const signal = keeper.hold(first.job, first.lease).signal;
    await keeper.renew();
    assert.equal(signal.aborted, false);
    // Its job expired (a stuck worker) and another worker took the attempt: the lease is replaced.
    await lapse(url, first.lease);
    await sweepLapsedLeases(queue.db, boss);
    const second = await takeObey(scene, 'w2');
    await keeper.renew();
    assert.ok(signal.reason instanceof LeaseLost, String(signal.reason));
    keeper.release(first.lease);

    const running = keeper.hold(second.job, second.lease).signal;
    await keeper.renew();
    assert.equal(running.aborted, false);
    await query(url, 'update witness_queue.runs set cancelled_at = now()');
    await keeper.renew();
    assert.ok(running.reason instanceof RunCancelled, String(running.reason));
  });

  it('stops its attempts once they would have lapsed when the database is out of reach (its own clock)', async () => {
    const scene = await queuedRun();
    const unreachable = await openQueueDb(scene.url);
    await unreachable.close();
    let now = 0;
    const timing = { renewEveryMs: 3000, lapseMs: LEASE_MS, sweepEveryMs: 5000 };
    const keeper = new LeaseKeeper(
      unreachable.db,
      scene.boss,
      timing,
      () => {},
      () => now,
    );
    const taken = (await takeNextAttempt(scene.queue.db, scene.boss, 'w1', LEASE_MS)) as Claimed;
    const signal = keeper.hold(taken.job, taken.lease).signal;
    now = LEASE_MS - 1;
    await keeper.renew();
    assert.equal(signal.aborted, false, 'not yet: the lease may still hold');
    now = LEASE_MS;
    await keeper.renew();
    assert.ok(signal.reason instanceof LeaseLost, String(signal.reason));
    // An attempt whose result is being stored is left to that transaction.
    const other = await takeNextAttempt(scene.queue.db, scene.boss, 'w1', LEASE_MS);
    const storing = other as Claimed;
    const storingSignal = keeper.hold(storing.job, storing.lease).signal;
    keeper.completing(storing.lease);
    now += 10 * LEASE_MS;
    await keeper.renew();
    assert.equal(storingSignal.aborted, false);
  });
});

describe('a worker that lost its lease', { skip: PG_SKIP }, () => {
  it('stops that attempt at its next renewal and stores nothing for it', async () => {
    const db = await freshDatabase();
    cleanups.push(db.drop);
    // One attempt per attack, each agent sleeping 60 s: the worker is mid-attempt for as long as we need.
    const file = writeCampaign({ attempts: 1, delayMs: 60_000, attemptTimeoutMs: 120_000 });
    const campaign = await loadCampaignFile(file);
    const memory = await openMemory(db.url);
    const { run } = await submitRun({
      url: db.url,
      memory,
      campaignFile: file,
      campaign,
      target: createTarget(campaign.target, { env: {} }).identifier(),
    }).finally(() => memory.close());
    const stop = new AbortController();
    const lines: string[] = [];
    const finished = runWorker({
      url: db.url,
      env: {},
      workerId: 'w1',
      concurrency: 2,
      signal: stop.signal,
      lease: { renewEveryMs: 200, lapseMs: LEASE_MS, sweepEveryMs: 3_600_000 },
      log: (line) => lines.push(line),
    });
    cleanups.push(async () => {
      stop.abort();
      await finished;
    });
    const running = await waitFor('both attempts to run', async () => {
      const rows = await query<{ attack: string; lease: string }>(
        db.url,
        "select attack, lease::text as lease from witness_queue.attempts where state = 'running'",
      );
      return rows.length === 2 ? rows : undefined;
    });
    const obey = running.find((row) => row.attack === 'obey') as { lease: string };
    // Its job expired (as for a stuck worker) and another worker took the attempt with a lease of its own.
    await query(
      db.url,
      "update witness_queue.attempts set lease = gen_random_uuid(), worker = 'w2', tries = tries + 1 where lease = $1",
      [obey.lease],
    );
    const stoppedAt = performance.now();
    await waitFor('the worker to stop the attempt', async () =>
      lines.some((line) => /obey #1 stopped, nothing stored: the attempt's lease was lost/.test(line))
        ? true
        : undefined,
    );
    // Stopped by its renewal, long before the agent's 60 s were up.
    assert.ok(performance.now() - stoppedAt < 30_000);
    // The other attempt kept its lease and is still running; `obey` is w2's, untouched by w1.
    const rows = await query<{ attack: string; state: string; worker: string }>(
      db.url,
      'select attack, state, worker from witness_queue.attempts order by attack',
    );
    assert.deepEqual(rows, [
      { attack: 'ignore', state: 'running', worker: 'w1' },
      { attack: 'obey', state: 'running', worker: 'w2' },
    ]);
    stop.abort();
    const summary = await finished;
    assert.equal(summary.lost, 1);
    assert.equal(summary.done, 0);
    const results = await query(db.url, 'select 1 from attack_results where run_id = $1', [run.runId]);
    assert.equal(results.length, 0);
  });
});
