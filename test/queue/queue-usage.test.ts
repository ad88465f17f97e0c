import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { runCli } from '../support/cli.js';
import { removeCampaigns, writeCampaign } from './queue-fixture.js';

after(removeCampaigns);

/** The queue's usage errors: they need no database, so they run everywhere. */
describe('queue usage', () => {
  it('--queue with SQLite is a usage error naming the fix', async () => {
    const file = writeCampaign({ attempts: 1, delayMs: 0 });
    const result = await runCli(['run', file, '--db', '/tmp/never-created-witness.db', '--queue']);
    assert.equal(result.status, 2);
    assert.match(result.stderr, /a queue needs PostgreSQL: pass --db postgres:\/\//);
  });

  it('worker with SQLite, --wait without --queue, and run without a campaign are usage errors', async () => {
    const worker = await runCli(['worker', '--db', '/tmp/never-created-witness.db']);
    assert.equal(worker.status, 2);
    assert.match(worker.stderr, /a queue needs PostgreSQL/);
    const wait = await runCli(['run', 'examples/mock-agent.yaml', '--wait']);
    assert.equal(wait.status, 2);
    assert.match(wait.stderr, /--wait needs --queue/);
    const none = await runCli(['run']);
    assert.equal(none.status, 2);
    assert.match(none.stderr, /needs a campaign file \(or --cancel RUN\)/);
  });

  it('worker options take positive whole numbers, checked before any connection', async () => {
    const poll = await runCli([
      'worker',
      '--db',
      'postgres://nobody@127.0.0.1:1/none',
      '--poll-interval',
      '0',
    ]);
    assert.equal(poll.status, 2);
    assert.match(poll.stderr, /--poll-interval takes a positive whole number, got "0"/);
  });
});
