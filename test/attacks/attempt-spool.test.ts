import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { AttemptRecord } from '../../src/attacks/attempt-record.js';
import { AttemptSpool } from '../../src/attacks/attempt-spool.js';
import { demoCampaign } from '../../src/attacks/demo-campaign.js';
import { cleanLeftoverRuns, findLeftoverRuns } from '../../src/attacks/leftover-runs.js';
import { runCampaign, runCampaignStreamed } from '../../src/attacks/run-campaign.js';
import { isProcessAlive } from '../../src/cli/process-alive.js';
import { InvalidOptionError } from '../../src/errors.js';
import { MockAgentTarget } from '../../src/targets/mock-agent-target.js';

describe('AttemptSpool', () => {
  let parent: string;
  let records: AttemptRecord[];
  before(async () => {
    parent = mkdtempSync(join(tmpdir(), 'witness-spool-'));
    // Real records (transcripts, observations, change sets, non-ASCII-free but multi-field) from a real run.
    records = (
      await runCampaign({
        campaign: demoCampaign('vulnerable'),
        target: new MockAgentTarget({ mode: 'vulnerable' }),
        workspaceParent: parent,
      })
    ).attempts;
  });
  after(() => rmSync(parent, { recursive: true, force: true }));

  it('gives back every record in job order, byte for byte what JSON.stringify gave, whatever order they were put in', async () => {
    const spool = await AttemptSpool.create(parent);
    try {
      // Concurrent puts, out of order, one of them carrying multi-byte text: ranges must not overlap.
      const unicode = { ...(records[0] as AttemptRecord), reply: 'réponse — ✓ 回答 🙂' };
      const all = [unicode, ...records.slice(1)];
      const order = all.map((_, i) => i).reverse();
      await Promise.all(order.map((i) => spool.put(i, all[i] as AttemptRecord)));
      assert.equal(spool.size, all.length);
      const texts: string[] = [];
      for await (const text of spool.texts()) texts.push(text);
      assert.deepEqual(
        texts,
        all.map((record) => JSON.stringify(record)),
      );
      assert.deepEqual(await spool.records(), JSON.parse(JSON.stringify(all)));
    } finally {
      await spool.dispose();
    }
  });

  it('skips jobs that never finished and refuses a second record for one job', async () => {
    const spool = await AttemptSpool.create(parent);
    try {
      await spool.put(2, records[2] as AttemptRecord);
      await spool.put(0, records[0] as AttemptRecord);
      await assert.rejects(spool.put(2, records[1] as AttemptRecord), InvalidOptionError);
      assert.deepEqual(
        (await spool.records()).map((r) => `${r.attack}#${r.attempt}`),
        [records[0], records[2]].map((r) => `${r?.attack}#${r?.attempt}`),
      );
    } finally {
      await spool.dispose();
    }
  });

  it('keeps its file private (0700 directory, 0600 file) and removes both on dispose', async () => {
    const spool = await AttemptSpool.create(parent);
    const dirPath = spool.directory;
    assert.equal(dirname(dirPath), realpathSync(parent));
    assert.equal(statSync(dirPath).mode & 0o777, 0o700);
    assert.equal(statSync(join(dirPath, 'records.jsonl')).mode & 0o777, 0o600);
    await spool.put(0, records[0] as AttemptRecord);
    await spool.dispose();
    await spool.dispose();
    assert.equal(existsSync(dirPath), false);
    await assert.rejects(spool.put(1, records[1] as AttemptRecord), InvalidOptionError);
  });

  it('is found and removed by `witness clean` when its run is killed before disposing of it', async () => {
    // The attack on the host this stops: records carry attackers' payloads, and a killed run used to leave
    // them in the shared temp directory for good. A child process spools one record and is SIGKILLed.
    const moduleUrl = new URL('../../src/attacks/attempt-spool.js', import.meta.url).href;
    const script = `const { AttemptSpool } = await import(${JSON.stringify(moduleUrl)});
const spool = await AttemptSpool.create(${JSON.stringify(parent)});
await spool.put(0, ${JSON.stringify(records[0])});
process.stdout.write(spool.directory + '\\n');
setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const [line] = (await once(child.stdout, 'data')) as [Buffer];
    const directory = line.toString('utf8').trim();
    assert.ok(existsSync(join(directory, 'records.jsonl')));
    child.kill('SIGKILL');
    await once(child, 'exit');

    const leftovers = findLeftoverRuns({ parent, uid: process.getuid?.() ?? -1, isAlive: isProcessAlive });
    const found = leftovers.find((run) => run.path === directory);
    assert.ok(found, "the killed run's spool is listed as a leftover run");
    assert.equal(found.pid, child.pid);
    assert.equal(found.inUse, false);
    const [cleaned] = cleanLeftoverRuns([found]);
    assert.equal(cleaned?.report.removed, true);
    assert.equal(existsSync(directory), false);
  });
});

describe('runCampaignStreamed', () => {
  let parent: string;
  before(() => {
    parent = mkdtempSync(join(tmpdir(), 'witness-streamed-'));
  });
  after(() => rmSync(parent, { recursive: true, force: true }));

  it('hands each record over with its job index and tallies the same totals runCampaign returns', async () => {
    const seen: Array<[number, string]> = [];
    const streamed = await runCampaignStreamed({
      campaign: demoCampaign('vulnerable'),
      target: new MockAgentTarget({ mode: 'vulnerable' }),
      workspaceParent: parent,
      concurrency: 3,
      onRecord: (record, index) => {
        seen.push([index, `${record.attack}#${record.attempt}:${record.outcome}`]);
      },
    });
    const collected = await runCampaign({
      campaign: demoCampaign('vulnerable'),
      target: new MockAgentTarget({ mode: 'vulnerable' }),
      workspaceParent: parent,
    });
    seen.sort((a, b) => a[0] - b[0]);
    assert.deepEqual(
      seen.map(([index]) => index),
      collected.attempts.map((_, i) => i),
    );
    assert.deepEqual(
      seen.map(([, label]) => label),
      collected.attempts.map((record) => `${record.attack}#${record.attempt}:${record.outcome}`),
    );
    assert.equal(streamed.finished, collected.attempts.length);
    assert.deepEqual(streamed.totals, collected.totals);
  });

  it('a rejecting onRecord ends the campaign with its error once running attempts settle', async () => {
    const failure = new Error('spool full');
    let calls = 0;
    await assert.rejects(
      runCampaignStreamed({
        campaign: demoCampaign('vulnerable'),
        target: new MockAgentTarget({ mode: 'vulnerable' }),
        workspaceParent: parent,
        concurrency: 1,
        onRecord: () => {
          calls++;
          throw failure;
        },
      }),
      (error) => error === failure,
    );
    assert.equal(calls, 1, 'no attempt starts after the lane failed');
    assert.deepEqual(readdirSync(parent), [], 'the run directory and workspaces are removed');
  });
});
