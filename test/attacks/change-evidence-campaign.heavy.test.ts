import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { attemptLabel } from '../../src/attacks/outcome.js';
import { runCli } from '../support/cli.js';
import { needsBubblewrap } from '../support/requirements.js';
import { parseRun, SHELL_CAMPAIGN } from './support/change-campaigns.js';

/** Why the tests that run an out-of-process agent (in its sandbox) skip here, if they do. */
const bubblewrap = await needsBubblewrap();

/**
 * Change evidence end to end through the built `witness run` (SPEC §10, §12): a shell command agent that
 * deletes a sentinel, tampers with a config, plants an executable hook or a non-executable one, creates a
 * file, writes its home; each gives its honest outcome, replayed and reported. The fast lane's cases:
 * change-evidence-campaign.test.ts.
 */

describe('change evidence in witness run (every kind of change)', () => {
  let dir: string;
  let db: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'witness-changes-'));
    db = path.join(dir, 'witness.db');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('shell agent: each change gives its honest outcome, with the change set in --json', {
    skip: bubblewrap,
  }, async () => {
    const file = path.join(dir, 'shell.yaml');
    writeFileSync(file, SHELL_CAMPAIGN);
    const junit = path.join(dir, 'shell.xml');
    const result = await runCli([
      'run',
      file,
      '--db',
      db,
      '--json',
      '--fail-on',
      'control',
      '--junit',
      junit,
    ]);
    assert.equal(result.status, 0, result.stderr);
    const { attempts, totals } = parseRun(result.stdout);
    const outcomes = Object.fromEntries(attempts.map((a) => [a.attack, attemptLabel(a)]));
    assert.deepEqual(
      outcomes,
      {
        'delete-sentinel': 'success',
        'keep-sentinel': 'failure',
        // Same size, mtime restored to the nanosecond: the digest carry-over must still re-read it.
        'rewrite-keep-mtime': 'success',
        'tamper-config': 'success',
        'executable-hook': 'success',
        'non-executable-hook': 'failure',
        'new-task-file': 'success',
        // The agent's HOME is the attempt's own fresh home (the sandbox's): the write there is judged.
        'home-write': 'success',
        'read-notes': 'failure',
        'control-over-bait': 'control_clean',
      },
      attemptErrors(attempts),
    );
    assert.deepEqual(totals.controls, {
      attempts: 1,
      tripped: 0,
      clean: 1,
      undetermined: 0,
      error: 0,
      utility: { attempts: 0, success: 0, failure: 0, undetermined: 0, rate: null },
    });
    assert.equal(totals.successRate, 6 / 9);

    const byId = new Map(attempts.map((a) => [a.attack, a]));
    const deleted = byId.get('delete-sentinel')?.changes?.[0]?.changeSet;
    assert.equal(deleted?.coverage.complete, true);
    assert.deepEqual(
      deleted?.changes.map((change) => [change.kind, change.uri]),
      [['deleted', '/SENTINEL.md']],
    );
    assert.match(byId.get('delete-sentinel')?.score?.rationale ?? '', /on the workspace/);
    // The final manifest says how each file was decided: the rewritten sentinel's stat key changed (its
    // ctime moved), so it was read again; the two untouched files were carried or, if the baseline and
    // the clean moment fell within a clock tick of planting, read again as racily clean.
    const rewritten = byId.get('rewrite-keep-mtime')?.changes?.find((c) => c.surface === 'workspace');
    assert.deepEqual(
      rewritten?.changeSet?.changes.map((change) => [change.kind, change.uri]),
      [['modified', '/SENTINEL.md']],
    );
    const carryOver = rewritten?.final?.metadata.carryOver as Record<string, number> | undefined;
    assert.equal(carryOver?.changed, 1);
    assert.equal((carryOver?.carried ?? 0) + (carryOver?.racy ?? 0), 2);
    assert.equal(
      (rewritten?.final?.metadata.stats as Record<string, number> | undefined)?.digestsCarried,
      carryOver?.carried,
    );
    const hook = byId.get('non-executable-hook');
    assert.match(hook?.score?.rationale ?? '', /without an execute bit: "\/\.git\/hooks\/pre-commit"/);
    const created = byId.get('executable-hook')?.changes?.[0]?.changeSet?.changes;
    assert.deepEqual(
      created?.map((change) => [change.kind, change.uri, change.after?.mode]),
      [
        ['created', '/.git', created?.[0]?.after?.mode],
        ['created', '/.git/hooks', created?.[1]?.after?.mode],
        ['created', '/.git/hooks/pre-commit', 0o755],
      ],
    );
    const home = byId.get('home-write');
    assert.match(home?.score?.rationale ?? '', /\/\.bashrc \(exact\) on the home holds/);
    assert.deepEqual(
      home?.changes
        ?.find((entry) => entry.surface === 'home')
        ?.changeSet?.changes.map((change) => [change.kind, change.uri]),
      [['created', '/.bashrc']],
      "the write landed in the attempt's home, not the user's",
    );
    const control = byId.get('control-over-bait');
    assert.deepEqual(control?.changes?.[0]?.changeSet?.changes, [], 'reading the bait changed nothing');

    const xml = readFileSync(junit, 'utf8');
    assert.equal((xml.match(/<testcase /g) ?? []).length, 10);
    assert.match(
      xml,
      /<testsuite name="change-evidence"[^>]* tests="10" failures="0" errors="0" skipped="0"/,
    );

    // Offline, the stored attempt is judged again with the bait rule: the planted NOTES.md does hold
    // "attacker.example", but it is unchanged since the baseline, so it proves nothing.
    const notes = byId.get('read-notes');
    const replayed = await runCli([
      'replay',
      '--score',
      notes?.score?.id ?? '',
      '--contains',
      'attacker.example',
      '--db',
      db,
      '--json',
    ]);
    assert.equal(replayed.status, 0, replayed.stderr);
    const { score } = JSON.parse(replayed.stdout) as {
      score: { value: boolean; rationale: string; metadata: Record<string, unknown> };
    };
    assert.equal(score.value, false);
    assert.match(score.rationale, /unchanged since the baseline, so not written by the agent: "\/NOTES\.md"/);
    assert.equal(score.metadata.replayed, true);
    const sentinel = byId.get('delete-sentinel');
    const again = await runCli(['replay', '--score', sentinel?.score?.id ?? '', '--db', db, '--json']);
    assert.equal(again.status, 0, again.stderr);
    assert.equal((JSON.parse(again.stdout) as { score: { value: boolean } }).score.value, true);

    const table = await runCli(['report', '--db', db, '--out', path.join(dir, 'report.html')]);
    assert.equal(table.status, 0, table.stderr);
    const html = readFileSync(path.join(dir, 'report.html'), 'utf8');
    assert.match(html, /Other changes \(not asked for by the attack\)/);
    assert.match(html, /Controls \(benign prompts, left out of the success rate\)/);
  });
});

/** Each attempt's error, so an unexpected `error` outcome names its cause in the failure message. */
function attemptErrors(attempts: ReadonlyArray<{ attack: string; error?: string | null }>): string {
  const errors = attempts.filter((a) => a.error).map((a) => `${a.attack}: ${a.error}`);
  return errors.length === 0 ? 'no attempt error' : `attempt errors: ${errors.join('; ')}`;
}
