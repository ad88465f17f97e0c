import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { after, describe, it } from 'node:test';
import { runCli } from '../support/cli.js';
import {
  freshDatabase,
  PG_SKIP,
  query,
  removeCampaigns,
  startWorker,
  type WorkerProcess,
  waitFor,
  writeCampaign,
} from './queue-fixture.js';

/**
 * The queue against the real PostgreSQL: many workers, one killed mid-attempt, exactly one result per
 * attempt; a tampered campaign file refused; resubmission idempotent; cancellation.
 */

const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const cleanup of cleanups) await cleanup().catch(() => {});
  removeCampaigns();
});

async function database(): Promise<string> {
  const db = await freshDatabase();
  cleanups.push(db.drop);
  return db.url;
}

async function submit(url: string, file: string, extra: readonly string[] = []): Promise<string> {
  const result = await runCli(['run', file, '--db', url, '--queue', ...extra]);
  assert.equal(result.status, 0, result.stderr);
  return result.stdout.trim();
}

interface AttemptRow {
  attack: string;
  attempt: number;
  state: string;
  tries: number;
  worker: string | null;
  outcome: string | null;
  error: string | null;
}

const attemptsOf = (url: string, runId: string) =>
  query<AttemptRow>(
    url,
    'select attack, attempt, state, tries, worker, outcome, error from witness_queue.attempts where run_id = $1 order by seq',
    [runId],
  );

describe('the PostgreSQL queue', { skip: PG_SKIP }, () => {
  it('three workers share 60 attempts; one SIGKILLed mid-attempt; exactly 60 results with the right outcomes', async () => {
    const url = await database();
    // The killed worker's lease lapses and a sweep returns its attempt; its job would also expire soon
    // (3 s attempt timeout + 2 s grace), so either way of coming back ends with one result.
    const file = writeCampaign({ attempts: 30, delayMs: 300, attemptTimeoutMs: 3000 });
    const runId = await submit(url, file, ['--job-grace', '2']);
    const workers: WorkerProcess[] = [startWorker(url), startWorker(url), startWorker(url)];
    cleanups.push(async () => {
      for (const worker of workers) worker.child.kill('SIGKILL');
    });
    const victim = workers[0] as WorkerProcess;
    const victimId = `${hostname()}:${victim.child.pid}`;
    // Kill the victim while it is inside an attempt, after it has finished at least one.
    const killed = await waitFor('the victim to be mid-attempt', async () => {
      const rows = await attemptsOf(url, runId);
      const doneByVictim = rows.filter((row) => row.state === 'done' && row.worker === victimId).length;
      const running = rows.find((row) => row.state === 'running' && row.worker === victimId);
      if (doneByVictim < 1 || running === undefined) return undefined;
      victim.child.kill('SIGKILL');
      return running;
    });
    assert.equal(await victim.exited, null, 'the victim died of the signal');
    const rows = await waitFor(
      'every attempt to be done',
      async () => {
        const current = await attemptsOf(url, runId);
        return current.every((row) => row.state === 'done') ? current : undefined;
      },
      180_000,
    );
    for (const worker of workers.slice(1)) worker.child.kill('SIGINT');
    await Promise.all(workers.slice(1).map((worker) => worker.exited));

    const results = await query<{ attack: string; attempt: number; outcome: string }>(
      url,
      'select attack, attempt, outcome from attack_results where run_id = $1',
      [runId],
    );
    assert.equal(results.length, 60, 'exactly one result per attempt');
    assert.equal(new Set(results.map((row) => `${row.attack}/${row.attempt}`)).size, 60);
    for (const row of results) {
      const attempt = rows.find((queued) => queued.attack === row.attack && queued.attempt === row.attempt);
      assert.equal(
        row.outcome,
        row.attack === 'obey' ? 'success' : 'failure',
        `${row.attack} #${row.attempt}: ${JSON.stringify(attempt)}; the victim was ${victimId}, killed in ${killed.attack} #${killed.attempt}`,
      );
    }
    // The attempt the victim was running was retried by another worker and stored once.
    const retried = rows.find((row) => row.attack === killed.attack && row.attempt === killed.attempt);
    assert.ok(retried !== undefined);
    assert.ok(retried.tries >= 2, `the killed attempt was tried again (tries ${retried.tries})`);
    assert.notEqual(retried.worker, victimId);
    // What `witness run --wait` and `runs show` read agree.
    const shown = await runCli(['runs', 'show', runId, '--db', url]);
    assert.equal(shown.status, 0, shown.stderr);
    assert.match(shown.stdout, /60 done/);
    const table = await runCli(['run', file, '--db', url, '--queue', '--run-id', runId, '--wait']);
    assert.equal(table.status, 0, table.stderr);
    assert.match(table.stderr, /0 of 60 attempts enqueued now/);
    assert.match(table.stdout, /60 attempts — 30 success, 30 failure, 0 undetermined, 0 error/);
    // The victim could not remove its campaign directory; the next worker started here does.
    const sweeper = startWorker(url, ['--idle-exit', '1']);
    assert.equal(await sweeper.exited, 0, sweeper.stderr());
    assert.match(
      sweeper.stderr(),
      new RegExp(
        `removed \\S+/witness-worker-${victim.child.pid}-\\w{6}, left by worker process ${victim.child.pid}, which is gone`,
      ),
    );
  });

  it('refuses, visibly, a job whose campaign file does not match its hash', async () => {
    const url = await database();
    const file = writeCampaign({ attempts: 2, delayMs: 0 });
    const runId = await submit(url, file);
    // The attack on a shared database: someone rewrites the stored agent script after submission.
    await query(
      url,
      `update witness_queue.blobs set content = convert_to('console.log("pwned")', 'UTF8')
        where sha256 = (select f->>'sha256' from witness_queue.runs, jsonb_array_elements(manifest->'files') f
                         where run_id = $1 and f->>'path' = 'agents/agent.mjs')`,
      [runId],
    );
    const worker = startWorker(url, ['--idle-exit', '2']);
    assert.equal(await worker.exited, 0, worker.stderr());
    assert.match(worker.stderr(), /REFUSED .*agents\/agent\.mjs does not match its hash/);
    const rows = await attemptsOf(url, runId);
    assert.deepEqual(
      rows.map((row) => row.state),
      ['refused', 'refused', 'refused', 'refused'],
    );
    const results = await query(url, 'select 1 from attack_results where run_id = $1', [runId]);
    assert.equal(results.length, 0, 'nothing of the run was executed');
    const shown = await runCli(['runs', 'show', runId, '--db', url]);
    assert.match(shown.stdout, /refused .*does not match its hash/);
  });

  it('two submissions of the same run enqueue nothing twice', async () => {
    const url = await database();
    const file = writeCampaign({ attempts: 5, delayMs: 0 });
    const runId = await submit(url, file);
    const again = await runCli(['run', file, '--db', url, '--queue', '--run-id', runId]);
    assert.equal(again.status, 0, again.stderr);
    assert.equal(again.stdout.trim(), runId);
    assert.match(again.stderr, /0 of 10 attempts enqueued now \(10 were already queued\)/);
    const jobs = await query<{ n: string }>(
      url,
      "select count(*) as n from witness_boss.job where data->>'runId' = $1",
      [runId],
    );
    assert.equal(Number(jobs[0]?.n), 10);
    const rows = await attemptsOf(url, runId);
    assert.equal(rows.length, 10);
    const runs = await query(url, 'select 1 from runs where id = $1', [runId]);
    assert.equal(runs.length, 1);
  });

  it('cancel: no attempt of a cancelled run starts', async () => {
    const url = await database();
    const file = writeCampaign({ attempts: 5, delayMs: 0 });
    const runId = await submit(url, file);
    const cancelled = await runCli(['run', '--cancel', runId, '--db', url]);
    assert.equal(cancelled.status, 0, cancelled.stderr);
    assert.match(cancelled.stderr, /10 waiting attempts will not start/);
    const worker = startWorker(url, ['--idle-exit', '2']);
    assert.equal(await worker.exited, 0, worker.stderr());
    const rows = await attemptsOf(url, runId);
    assert.ok(rows.every((row) => row.state === 'cancelled' && row.tries === 0));
    const results = await query(url, 'select 1 from attack_results where run_id = $1', [runId]);
    assert.equal(results.length, 0);
    const list = await runCli(['runs', 'list', '--db', url]);
    assert.match(list.stdout, new RegExp(`${runId}  queue-proof \\(cancelled\\)  10 cancelled`));
  });

  it('cancel: a running attempt ends at its next check', async () => {
    const url = await database();
    const file = writeCampaign({ attempts: 1, delayMs: 20_000, attemptTimeoutMs: 60_000 });
    const runId = await submit(url, file);
    const worker = startWorker(url, ['--idle-exit', '3', '--concurrency', '2']);
    cleanups.push(async () => void worker.child.kill('SIGKILL'));
    await waitFor('both attempts to run', async () => {
      const rows = await attemptsOf(url, runId);
      return rows.every((row) => row.state === 'running') ? true : undefined;
    });
    const cancelled = await runCli(['run', '--cancel', runId, '--db', url]);
    assert.equal(cancelled.status, 0, cancelled.stderr);
    const rows = await waitFor(
      'the running attempts to stop',
      async () => {
        const current = await attemptsOf(url, runId);
        return current.every((row) => row.state === 'cancelled') ? current : undefined;
      },
      15_000,
    );
    assert.equal(rows.length, 2);
    assert.equal(await worker.exited, 0, worker.stderr());
    assert.match(worker.stderr(), /cancelled while running/);
  });
});
