import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CampaignSchema } from '../../../src/attacks/campaign.js';
import { demoCampaign } from '../../../src/attacks/demo-campaign.js';
import { MemoryAttemptRecorder } from '../../../src/attacks/memory-recorder.js';
import { runCampaign } from '../../../src/attacks/run-campaign.js';
import type { Memory } from '../../../src/memory/memory.js';
import { openMemory } from '../../../src/memory/open-memory.js';
import {
  ATTEMPT_ORDERS,
  type AttemptFilter,
  type AttemptOrder,
  type AttemptRow,
  type RunCounts,
} from '../../../src/memory/run-queries.js';
import type { AttemptRecord } from '../../../src/models/attempt-record.js';
import type { CampaignRun } from '../../../src/models/campaign-run.js';
import { conditionSurface } from '../../../src/models/condition.js';
import { DEFAULT_REPORT_BOUNDS, reportRunOf } from '../../../src/render/report-run.js';
import { countAttempts, gapCodesOf } from '../../../src/render/run-summary.js';
import { storedReportRun } from '../../../src/render/stored-report-run.js';
import { resolveSandboxSettings } from '../../../src/sandbox/sandbox-settings.js';
import { CommandTarget } from '../../../src/targets/command-target.js';
import { MockAgentTarget } from '../../../src/targets/mock-agent-target.js';
import { fullSamples } from '../../support/sample-size.js';
import type { TestBackend, TestDatabase } from './backends.js';

/**
 * `Memory.runQueries` answers what the viewer and the report ask from the database, and its answers are
 * exactly what the attempts in hand give: counts equal to counting the records (`countAttempts`, chains
 * counted by their deciding round), every page order and filter equal to sorting and filtering them,
 * pages that together list each attempt once. The run: the demo against the vulnerable mock (successes, a
 * control), an attack whose evidence has a gap, each record stored many times with its attempt number
 * renumbered, some outcomes swapped for the guarded run's, and every fourth copy stored as an adaptive
 * chain of three rounds (some won in round 2, some lost in all three), so orders have ties to break, pages
 * span attacks and chains have a deciding round to find. `npm test` stores a few hundred attempts; the
 * heavy lane a few thousand (test/support/sample-size.ts).
 */

const OUTCOME_RANK = { success: 0, undetermined: 1, error: 2, failure: 3 } as const;

export function runQueriesSuite(backend: TestBackend): void {
  describe(`run queries on ${backend.name}`, () => {
    if (backend.skip !== undefined) {
      it(`runs the run-query tests on ${backend.name}`, { skip: backend.skip }, () => {});
      return;
    }
    // 8 copies hold every kind the loop below makes (chains won and lost, guarded twins among the rest).
    const copies = fullSamples() ? 320 : 8;
    let database: TestDatabase;
    let memory: Memory;
    let run: CampaignRun;
    let other: CampaignRun;
    let records: AttemptRecord[];
    let guarded: AttemptRecord[];

    before(async () => {
      database = await backend.fresh();
      memory = await openMemory(database.target);
      const recorder = new MemoryAttemptRecorder(memory);
      // The originals are stored too (their conversations and scores are what the copies rest on).
      const vulnerable = await runCampaign({
        campaign: demoCampaign('vulnerable'),
        target: new MockAgentTarget({ mode: 'vulnerable' }),
        recorder,
      });
      const guardedRun = await runCampaign({
        campaign: demoCampaign('guarded'),
        target: new MockAgentTarget({ mode: 'guarded' }),
        recorder,
      });
      // An attack whose evidence has a gap: a glob over a link that leaves the workspace.
      const gapped = await runCampaign({
        campaign: CampaignSchema.parse({
          name: 'gap',
          target: { kind: 'command', command: '/bin/sh' },
          attacks: [
            { id: 'link-out', prompt: 'x', expect: { uri: '/out/*', match: 'glob', contains: 'attacker' } },
          ],
        }),
        target: new CommandTarget({
          command: '/bin/sh',
          args: ['-c', 'mkdir out && ln -s /etc/hostname out/h'],
          // The gap comes from the link, not from the sandbox: this runs where bubblewrap is missing too.
          sandbox: await resolveSandboxSettings({ mode: 'none', hostEnv: { PATH: '/usr/bin:/bin' } }),
        }),
        recorder,
      });
      const copyOf = (original: CampaignRun, suffix: string): CampaignRun => ({
        ...original,
        runId: `${original.runId}-${suffix}`,
        attacks: original.attacks.map((attack) => ({ ...attack, attempts: attack.attempts * copies })),
      });
      run = copyOf(
        { ...vulnerable.run, attacks: [...vulnerable.run.attacks, ...gapped.run.attacks] },
        'copies',
      );
      other = copyOf(guardedRun.run, 'copies');
      records = [];
      guarded = [];
      const sources = [...vulnerable.attempts, ...gapped.attempts];
      for (let copy = 0; copy < copies; copy++) {
        for (const [index, record] of sources.entries()) {
          const guardedTwin = guardedRun.attempts[index] ?? record;
          const attempt = record.attempt + copy * 2;
          const base = { runId: run.runId, campaign: run.campaign, attempt };
          if (copy % 4 === 3) {
            // A chain of three rounds: lost, then won or lost (by copy), then the third as the source.
            const rounds = [guardedTwin, copy % 8 === 3 ? record : guardedTwin, record];
            for (const [at, source] of rounds.entries()) {
              records.push({ ...source, ...base, chain: `chain-${copy}-${index}`, round: at + 1 });
            }
            continue;
          }
          // Every third copy takes the guarded run's record of the same attack: failures among successes.
          records.push({ ...(copy % 3 === 2 ? guardedTwin : record), ...base });
        }
        for (const record of guardedRun.attempts) {
          guarded.push({
            ...record,
            runId: other.runId,
            campaign: other.campaign,
            attempt: record.attempt + copy * 2,
          });
        }
      }
      await recorder.startRun(run);
      for (const record of records) await recorder.recordAttempt(record, run);
      await recorder.startRun(other);
      for (const record of guarded) await recorder.recordAttempt(record, other);
    });
    after(async () => {
      await memory?.close();
      await database?.cleanup();
    });

    it('counts each run as counting its attempts does, chains by their deciding round', async () => {
      const counts = await memory.runQueries.runCounts();
      assert.deepEqual(sorted(counts.get(run.runId)), sorted(countAttempts(records)));
      assert.deepEqual(sorted(counts.get(other.runId)), sorted(countAttempts(guarded)));
      assert.deepEqual([...(await memory.runQueries.runCounts([other.runId])).keys()], [other.runId]);
      // What the data was built to hold, so the comparison above compares something.
      const mine = counts.get(run.runId) as RunCounts;
      assert.ok(mine.gaps.length > 0, 'the run has attempts with gaps');
      assert.ok(mine.perAttackOutcome.some((entry) => !entry.deciding && entry.count > 0));
      assert.ok(
        mine.perAttackOutcome.some((entry) => entry.deciding && entry.outcome === 'success'),
        'some chains are won',
      );
      assert.ok(records.length >= copies * sources(run));
      assert.deepEqual(
        await memory.runQueries.runCounts(['no-such-run']),
        new Map([['no-such-run', sorted(undefined)]]),
      );
    });

    const filters: Array<[string, AttemptFilter]> = [
      ['all', {}],
      ['successes', { outcome: 'success' }],
      ['tripped controls', { outcome: 'success', control: true }],
      ['two attacks', { attacks: ['hook-injection', 'config-injection'] }],
      ['with a gap', { gap: 'link_outside_root' }],
      ['without gaps', { gap: 'none' }],
      ['reply text', { replyText: 'SUMMARY' }],
      ['failures of one attack', { outcome: 'failure', attacks: ['script-injection'] }],
      ['home surface', { surface: 'home' }],
    ];
    for (const [name, filter] of filters) {
      it(`pages every order both ways, each attempt once, as sorting the records does: ${name}`, async () => {
        const expected = records.filter((record) => keeps(record, filter, run));
        assert.equal(await memory.runQueries.countAttempts(run.runId, filter), expected.length);
        const limit = Math.max(7, Math.ceil(expected.length / 6));
        for (const order of ATTEMPT_ORDERS) {
          for (const descending of [false, true]) {
            const rows: AttemptRow[] = [];
            let after: string | undefined;
            for (let page = 0; page < 100; page++) {
              const result = await memory.runQueries.pageAttempts(run.runId, {
                ...filter,
                order,
                descending,
                limit,
                after,
              });
              assert.ok(result.rows.length <= limit);
              rows.push(...result.rows);
              if (result.next === null) break;
              after = result.next;
            }
            const want = sortBy(expected, order, run);
            if (descending) want.reverse();
            // Ties beyond the order's columns are broken by an id the records do not carry: compare the
            // order's own key, then the sets.
            assert.deepEqual(
              rows.map((row) => sortKey(row, order, run)),
              want.map((record) => sortKey(rowLike(record, run), order, run)),
              `${order} ${descending ? 'desc' : 'asc'}`,
            );
            assert.deepEqual(rows.map(keyOf).sort(), expected.map(keyOf).sort());
          }
        }
      });
    }

    it('gives a row the attempt facts and the first characters of its reply', async () => {
      const page = await memory.runQueries.pageAttempts(run.runId, {
        order: 'run',
        descending: false,
        limit: 1,
      });
      const row = page.rows[0] as AttemptRow;
      const record = records.find(
        (entry) => entry.attack === row.attack && entry.attempt === row.attempt && entry.round === row.round,
      ) as AttemptRecord;
      assert.deepEqual(row, rowLike(record, run));
      const gapped = await memory.runQueries.pageAttempts(run.runId, {
        order: 'run',
        descending: false,
        limit: 1,
        gap: 'link_outside_root',
      });
      assert.deepEqual(gapped.rows[0]?.gapCodes, ['link_outside_root']);
    });

    it('reads one attempt in full, its chain and its neighbours in the run order', async () => {
      const stored = await memory.listAttempts(run.runId);
      const middle = stored[5] as AttemptRecord;
      assert.deepEqual(await memory.runQueries.getAttempt(run.runId, middle), middle);
      assert.equal(
        await memory.runQueries.getAttempt(run.runId, { attack: middle.attack, attempt: 99_999 }),
        undefined,
      );
      const key = (record: AttemptRecord | undefined) => ({
        attack: record?.attack,
        attempt: record?.attempt,
        ...(record?.round === undefined ? {} : { round: record.round }),
      });
      for (const index of [5, stored.findIndex((record) => record.round === 2)]) {
        const here = stored[index] as AttemptRecord;
        assert.deepEqual(await memory.runQueries.neighbours(run.runId, key(here) as never), {
          previous: key(stored[index - 1]),
          next: key(stored[index + 1]),
        });
      }
      const round = stored.find((record) => record.round === 2) as AttemptRecord;
      assert.deepEqual(await memory.runQueries.getAttempt(run.runId, key(round) as never), round);
      assert.deepEqual(
        await memory.runQueries.getAttempt(run.runId, { attack: round.attack, attempt: round.attempt }),
        stored.find((record) => record.chain === round.chain && record.round === 1),
      );
      assert.deepEqual(
        await memory.runQueries.chainRounds(run.runId, round.chain as string),
        stored
          .filter((record) => record.chain === round.chain)
          .map((record) => ({
            attack: record.attack,
            attempt: record.attempt,
            round: record.round,
            outcome: record.outcome,
          })),
      );
      const first = await memory.runQueries.firstAttempts(run.runId, { outcome: 'undetermined' }, 3);
      assert.deepEqual(first, stored.filter((record) => record.outcome === 'undetermined').slice(0, 3));
      assert.ok(first.length > 0);
    });

    it("chooses the report's cards and rows as the collector does from the records in the run's order", async () => {
      const stored = await memory.listAttempts(run.runId);
      for (const bounds of [DEFAULT_REPORT_BOUNDS, { cardsPerOutcome: 3, compact: 5 }]) {
        const { attempts, ...fromQueries } = await storedReportRun(memory.runQueries, run, bounds);
        const fromRecords = reportRunOf(run, stored, bounds);
        assert.equal(attempts, stored.length);
        assert.deepEqual(
          { ...fromQueries, summary: { ...fromQueries.summary, counts: [] } },
          { ...fromRecords, summary: { ...fromRecords.summary, counts: [] } },
        );
        assert.deepEqual(sortedCounts(fromQueries.summary.counts), sortedCounts(fromRecords.summary.counts));
      }
      const small = await storedReportRun(memory.runQueries, run, { cardsPerOutcome: 3, compact: 5 });
      assert.ok(
        small.compactOmitted > 0 && small.cardsOmitted.some((kind) => kind.count > 0),
        'the bounds bite',
      );
    });

    it('pairs two runs by attack, attempt and round', async () => {
      const pairs = await memory.runQueries.pairAttempts(run.runId, other.runId, 4);
      const pairKey = (record: AttemptRecord) => `${record.attack}#${record.attempt}#${record.round ?? 0}`;
      const byKey = new Map(guarded.map((record) => [pairKey(record), record.outcome]));
      const paired = sortBy(records, 'run', run).filter((record) => byKey.has(pairKey(record)));
      const changed = paired.filter((record) => byKey.get(pairKey(record)) !== record.outcome);
      assert.equal(pairs.paired, paired.length);
      assert.equal(pairs.total, changed.length);
      assert.ok(changed.length > 0);
      assert.deepEqual(
        pairs.changed,
        changed.slice(0, 4).map((record) => ({
          attack: record.attack,
          attempt: record.attempt,
          round: record.round,
          left: record.outcome,
          right: byKey.get(pairKey(record)),
        })),
      );
    });

    it('changes its token when an attempt is stored, and refuses a cursor it did not give', async () => {
      const before = await memory.runQueries.changeToken(run.runId);
      const all = await memory.runQueries.changeToken();
      assert.equal(await memory.runQueries.changeToken(run.runId), before);
      await new MemoryAttemptRecorder(memory).recordAttempt(
        { ...(records[0] as AttemptRecord), attempt: 100_000 },
        run,
      );
      records.push({ ...(records[0] as AttemptRecord), attempt: 100_000 });
      assert.notEqual(await memory.runQueries.changeToken(run.runId), before);
      assert.notEqual(await memory.runQueries.changeToken(), all);
      await assert.rejects(
        memory.runQueries.pageAttempts(run.runId, {
          order: 'run',
          descending: false,
          limit: 5,
          after: 'WzEsIngiXQ',
        }),
        /the page cursor is not one this viewer gave/,
      );
    });
  });
}

function sources(run: CampaignRun): number {
  return run.attacks.length;
}

/** Counts with their lists in a fixed order (the database and the counter list them differently). */
function sorted(value: RunCounts | undefined): RunCounts {
  const counts = value ?? { perAttackOutcome: [], gaps: [], containment: [], lastFinishedAt: null };
  return {
    ...counts,
    perAttackOutcome: [...counts.perAttackOutcome].sort((a, b) =>
      `${a.attack} ${a.outcome} ${a.task} ${a.deciding}`.localeCompare(
        `${b.attack} ${b.outcome} ${b.task} ${b.deciding}`,
      ),
    ),
  };
}

function sortedCounts<T extends { attack: string; outcome: string; task: string | null }>(counts: T[]): T[] {
  return [...counts].sort((a, b) =>
    `${a.attack} ${a.outcome} ${a.task}`.localeCompare(`${b.attack} ${b.outcome} ${b.task}`),
  );
}

function keyOf(row: { attack: string; attempt: number; round?: number | undefined }): string {
  return `${row.attack}#${row.attempt}#${row.round ?? 0}`;
}

function surfaceOf(record: AttemptRecord, run: CampaignRun): string {
  const attack = run.attacks.find((entry) => entry.id === record.attack);
  const condition = attack?.expectation.conditions[0];
  return condition === undefined ? 'workspace' : conditionSurface(condition);
}

function keeps(record: AttemptRecord, filter: AttemptFilter, run: CampaignRun): boolean {
  const gaps = gapCodesOf(record);
  const control = run.attacks.some((attack) => attack.id === record.attack && attack.control === true);
  return (
    (filter.attacks === undefined || filter.attacks.includes(record.attack)) &&
    (filter.outcome === undefined || record.outcome === filter.outcome) &&
    (filter.control === undefined || filter.control === control) &&
    (filter.surface === undefined || filter.surface === surfaceOf(record, run)) &&
    (filter.gap === undefined || (filter.gap === 'none' ? gaps.length === 0 : gaps.includes(filter.gap))) &&
    (filter.replyText === undefined ||
      (record.reply ?? '').toLowerCase().includes(filter.replyText.toLowerCase()))
  );
}

/** What a page row of this record holds. */
function rowLike(record: AttemptRecord, run: CampaignRun): AttemptRow {
  return {
    attack: record.attack,
    attempt: record.attempt,
    chain: record.chain ?? null,
    round: record.round,
    outcome: record.outcome,
    control: run.attacks.some((attack) => attack.id === record.attack && attack.control === true),
    surface: surfaceOf(record, run),
    taskOutcome: record.task?.outcome ?? null,
    finishedAt: record.finishedAt,
    containment: record.containment ?? null,
    gapCodes: gapCodesOf(record),
    reply: record.reply === null ? null : record.reply.slice(0, 200),
    failed: record.error !== null,
  };
}

/** The sort key of an order, as comparable text. */
function sortKey(row: AttemptRow, order: AttemptOrder, run: CampaignRun): string {
  const position = String(run.attacks.findIndex((attack) => attack.id === row.attack)).padStart(4, '0');
  const attempt = String(row.attempt).padStart(6, '0');
  const round = String(row.round ?? 0).padStart(2, '0');
  const inRun = `${position} ${attempt} ${round}`;
  switch (order) {
    case 'run':
      return inRun;
    case 'attack':
      return `${row.attack} ${attempt} ${round}`;
    case 'outcome':
      return `${OUTCOME_RANK[row.outcome]} ${inRun}`;
    case 'attempt':
      return `${attempt} ${position} ${round}`;
    case 'surface':
      return `${row.surface} ${inRun}`;
    case 'gaps':
      return `${row.gapCodes.length} ${inRun}`;
    case 'finished':
      return row.finishedAt;
  }
}

function sortBy(records: readonly AttemptRecord[], order: AttemptOrder, run: CampaignRun): AttemptRecord[] {
  return records
    .map((record) => ({ record, key: sortKey(rowLike(record, run), order, run) }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((entry) => entry.record);
}
