import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { runCli } from '../support/cli.js';
import {
  freshDatabase,
  PG_SKIP,
  query,
  removeCampaigns,
  startWorker,
  WORKER_TMPDIR,
  type WorkerProcess,
  waitFor,
  writeCampaign,
} from './queue-fixture.js';

/**
 * A lost worker's attempts come back in seconds, with default settings: no --job-grace, no
 * --maintenance-interval, no attemptTimeoutMs in the campaign (so its job would expire only after
 * 300 + 120 s). Three workers share 30 attempts; one is SIGKILLed in the middle of an attempt; its lease
 * lapses, a sweep puts the attempt back, and another worker runs it: 30 results, each attempt once,
 * within 150 s of submission.
 *
 * And a live worker's files survive a worker that cannot see it: a second worker started in another pid
 * namespace (bubblewrap), where the first worker's pid names no process, sweeps the shared temp directory
 * at start and leaves the first worker's campaign directory alone (its lock is held).
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

interface AttemptRow {
  attack: string;
  attempt: number;
  state: string;
  tries: number;
  worker: string | null;
  started_at: Date | null;
}

const attemptsOf = (url: string, runId: string) =>
  query<AttemptRow>(
    url,
    'select attack, attempt, state, tries, worker, started_at from witness_queue.attempts where run_id = $1 order by seq',
    [runId],
  );

const dbNow = async (url: string) => (await query<{ now: Date }>(url, 'select now()'))[0]?.now as Date;

function started(workers: WorkerProcess[]): void {
  cleanups.push(async () => {
    for (const worker of workers) worker.child.kill('SIGKILL');
  });
}

const BWRAP = spawnSync('bwrap', ['--version']).status === 0;

describe('a lost worker, with default settings', { skip: PG_SKIP }, () => {
  it('30 attempts, three workers, one SIGKILLed mid-attempt: exactly 30 results within 150 s of submission', async (t) => {
    const url = await database();
    const file = writeCampaign({ attempts: 15, delayMs: 1000, attemptTimeoutMs: null });
    const workers = [0, 1, 2].map(() => startWorker(url, [], { defaults: true }));
    started(workers);
    for (const worker of workers) {
      await waitFor('the workers to be ready', async () =>
        worker.stderr().includes('taking attempts from') ? true : undefined,
      );
    }
    const submittedAt = await dbNow(url);
    const submitted = await runCli(['run', file, '--db', url, '--queue']);
    assert.equal(submitted.status, 0, submitted.stderr);
    const runId = submitted.stdout.trim();
    // What a lost attempt waits for is printed at submission: its lease, not the job's 420 s expiry.
    assert.match(
      submitted.stderr,
      /a lost worker's attempt is back in the queue at most 20 s after its last lease renewal/,
    );
    assert.match(submitted.stderr, /until its job expires, 420 s after it started/);

    const victim = workers[0] as WorkerProcess;
    const victimId = `${hostname()}:${victim.child.pid}`;
    const killed = await waitFor('the victim to be mid-attempt', async () => {
      const rows = await attemptsOf(url, runId);
      const doneByVictim = rows.filter((row) => row.state === 'done' && row.worker === victimId).length;
      const running = rows.find((row) => row.state === 'running' && row.worker === victimId);
      if (doneByVictim < 1 || running === undefined) return undefined;
      victim.child.kill('SIGKILL');
      return running;
    });
    const killedAt = await dbNow(url);
    assert.equal(await victim.exited, null, 'the victim died of the signal');

    const rows = await waitFor(
      'every attempt to be done',
      async () => {
        const current = await attemptsOf(url, runId);
        return current.every((row) => row.state === 'done') ? current : undefined;
      },
      150_000,
    );
    const results = await query<{ attack: string; attempt: number; outcome: string; created_at: string }>(
      url,
      'select attack, attempt, outcome, created_at from attack_results where run_id = $1',
      [runId],
    );
    assert.equal(results.length, 30, 'exactly one result per attempt');
    assert.equal(new Set(results.map((row) => `${row.attack}/${row.attempt}`)).size, 30);
    for (const row of results) assert.equal(row.outcome, row.attack === 'obey' ? 'success' : 'failure');
    const last = Math.max(...results.map((row) => Date.parse(row.created_at)));
    const seconds = (last - submittedAt.getTime()) / 1000;
    assert.ok(seconds <= 150, `the last result came ${seconds.toFixed(1)} s after submission`);

    // The killed attempt ran again, on another worker, within 30 s of the kill (the database's clock).
    const retried = rows.find((row) => row.attack === killed.attack && row.attempt === killed.attempt);
    assert.ok(retried !== undefined && retried.started_at !== null);
    assert.equal(retried.tries, 2);
    assert.notEqual(retried.worker, victimId);
    const back = (retried.started_at.getTime() - killedAt.getTime()) / 1000;
    assert.ok(back <= 30, `the lost attempt started again ${back.toFixed(1)} s after its worker died`);
    t.diagnostic(
      `last result ${seconds.toFixed(1)} s after submission; the lost attempt started again ${back.toFixed(1)} s after its worker died`,
    );
    const survivors = workers.slice(1);
    for (const worker of survivors) worker.child.kill('SIGINT');
    await Promise.all(survivors.map((worker) => worker.exited));
    assert.match(
      survivors.map((worker) => worker.stderr()).join(''),
      new RegExp(
        `${killed.attack} #${killed.attempt}: its worker ${victimId.replace(/[.]/g, '\\.')} stopped renewing its lease`,
      ),
    );
  });

  it("a worker in another pid namespace leaves a live worker's campaign directory alone", {
    skip: BWRAP
      ? undefined
      : 'bubblewrap (bwrap) is not installed: it gives the second worker its own pid namespace',
  }, async () => {
    const url = await database();
    const file = writeCampaign({ attempts: 2, delayMs: 4000, attemptTimeoutMs: null });
    const owner = startWorker(url, [], { defaults: true });
    started([owner]);
    const submitted = await runCli(['run', file, '--db', url, '--queue']);
    assert.equal(submitted.status, 0, submitted.stderr);
    const runId = submitted.stdout.trim();
    const ownerDirectories = () =>
      readdirSync(WORKER_TMPDIR).filter((name) => name.startsWith(`witness-worker-${owner.child.pid}-`));
    await waitFor('the owner to run an attempt', async () => {
      const rows = await attemptsOf(url, runId);
      return rows.some((row) => row.state === 'running') && ownerDirectories().length > 0 ? true : undefined;
    });
    const [directory] = ownerDirectories();
    assert.ok(directory !== undefined);
    // In its own pid namespace the owner's pid names no process: by the pid alone, the directory looks
    // left by a dead worker. The sweep at its start must leave it (the owner holds its lock).
    const stranger = startWorker(url, ['--idle-exit', '1', '--concurrency', '1'], {
      defaults: true,
      wrap: ['bwrap', '--unshare-pid', '--dev-bind', '/', '/', '--proc', '/proc', '--'],
    });
    started([stranger]);
    await waitFor('the stranger to start', async () =>
      stranger.stderr().includes('taking attempts from') ? true : undefined,
    );
    assert.doesNotMatch(stranger.stderr(), /removed .*witness-worker-/);
    assert.equal(existsSync(path.join(WORKER_TMPDIR, directory, 'campaign.yaml')), true);
    const rows = await waitFor(
      'both attempts of every attack to be done',
      async () => {
        const current = await attemptsOf(url, runId);
        return current.every((row) => row.state === 'done') ? current : undefined;
      },
      120_000,
    );
    assert.equal(rows.length, 4);
    owner.child.kill('SIGINT');
    assert.equal(await owner.exited, 0, owner.stderr());
    await stranger.exited;
  });
});
