import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { AttemptRecordSchema } from '../../src/attacks/attempt-record.js';
import { openMemory } from '../../src/memory/open-memory.js';
import { CLI_PATH } from '../support/cli.js';
import { makeWorkspace } from '../support/workspace.js';

/**
 * SPEC §13 "a run survives its agents": a full disk while one attempt's record is spooled or stored makes
 * that attempt's outcome say so, and the run still prints its table or JSON, writes its report and JUnit,
 * and exits with its --fail-on status; what was stored before stays stored. The attack: an agent whose
 * reply is larger than what is left on the file system of the run's spool or memory. Before, the write's
 * ENOSPC rejected the whole campaign: no table, no report, JSON or JUnit, no --fail-on status.
 *
 * The full disk is real: a small tmpfs mounted in a private mount namespace (`unshare -m`, as root), which
 * vanishes with the process. Where that cannot be had the tests skip, saying why.
 */

const MOUNTABLE = canMountTmpfs();

function canMountTmpfs(): true | string {
  if (process.getuid?.() !== 0) return 'mounting a tmpfs in a private mount namespace needs root';
  const probe = spawnSync('unshare', ['-m', 'sh', '-c', 'mount -t tmpfs -o size=1m tmpfs /mnt'], {
    encoding: 'utf8',
  });
  if (probe.error !== undefined) return `unshare cannot be run: ${probe.error.message}`;
  return probe.status === 0 ? true : `unshare -m cannot mount a tmpfs here: ${probe.stderr.trim()}`;
}

/**
 * Three attacks, one attempt each: the first plants the hook (success), the second plants it and replies
 * with `replyBytes` bytes (its record is the one that does not fit), the third does nothing (failure).
 */
function campaignFile(dir: string, replyBytes: number): string {
  const plant = 'mkdir -p .git/hooks && echo attacker > .git/hooks/pre-commit';
  const file = path.join(dir, 'campaign.yaml');
  const attack = (id: string, script: string) => [
    `  - id: ${id}`,
    `    prompt: ${JSON.stringify(script)}`,
    '    expect: { uri: /.git/hooks/pre-commit, contains: attacker }',
  ];
  writeFileSync(
    file,
    [
      'name: full-disk',
      'sandbox: none',
      'target:',
      '  kind: command',
      '  command: /bin/sh',
      '  args: ["-c", "{prompt}"]',
      `  maxOutputBytes: ${replyBytes + 1000}`,
      'attacks:',
      ...attack('small-success', plant),
      ...attack('huge-reply', `${plant}; yes A | head -c ${replyBytes}`),
      ...attack('nothing', 'true'),
    ].join('\n'),
  );
  return file;
}

/**
 * Runs `sh -c script` in a private mount namespace with a `sizeMb` tmpfs at `mount`; `$@` are `args`.
 * The script runs the CLI as `"$WITNESS" run …`.
 */
function inFullDiskNamespace(
  mount: string,
  sizeMb: number,
  script: string,
  args: readonly string[],
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  mkdirSync(mount, { recursive: true });
  const whole = `mount -t tmpfs -o size=${sizeMb}m tmpfs "${mount}" || exit 99\n${script}`;
  return new Promise((resolve, reject) => {
    const child = spawn('unshare', ['-m', 'sh', '-c', whole, 'sh', ...args], {
      env: { ...process.env, WITNESS: `${process.execPath} ${CLI_PATH}` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

function attemptsOf(stdout: string) {
  const parsed = JSON.parse(stdout) as { attempts: unknown[] };
  return parsed.attempts.map((attempt) => AttemptRecordSchema.parse(attempt));
}

async function storedAttempts(db: string) {
  const memory = await openMemory(db, { mustExist: true });
  try {
    const [run] = await memory.listRuns();
    return await memory.listAttempts(run?.runId ?? '');
  } finally {
    await memory.close();
  }
}

describe('a run survives a full disk', { skip: MOUNTABLE === true ? false : MOUNTABLE }, () => {
  it('the spool: the attempt whose record does not fit is kept as a stand-in saying why; the run ends with all its outputs', async () => {
    const dir = makeWorkspace();
    // As root, the agents (sandbox: none) are uids of their own, which reach their workspaces by path.
    chmodSync(dir, 0o755);
    const mount = path.join(dir, 'full');
    const out = {
      db: path.join(dir, 'witness.db'),
      report: path.join(dir, 'report.html'),
      junit: path.join(dir, 'junit.xml'),
    };
    // The spool and the run directories live under TMPDIR: on the small tmpfs. The memory does not.
    const result = await inFullDiskNamespace(
      mount,
      4,
      'TMPDIR="$1" $WITNESS run "$2" --json --db "$3" --report "$4" --junit "$5" --fail-on success',
      [mount, campaignFile(dir, 3_000_000), out.db, out.report, out.junit],
    );
    assert.equal(result.status, 3, result.stderr);
    const attempts = attemptsOf(result.stdout);
    assert.deepEqual(
      attempts.map((attempt) => [attempt.attack, attempt.outcome]),
      [
        ['small-success', 'success'],
        ['huge-reply', 'success'],
        ['nothing', 'failure'],
      ],
    );
    const [, huge] = attempts;
    assert.match(huge?.storeError ?? '', /^this run's spool could not take its record: ENOSPC/);
    assert.deepEqual(huge?.transcript, []);
    assert.equal(attempts[0]?.storeError, undefined);
    assert.match(result.stderr, /--fail-on success: 2 attempts ended so/);
    assert.match(readFileSync(out.report, 'utf8'), /huge-reply/);
    assert.equal((readFileSync(out.junit, 'utf8').match(/<testcase /g) ?? []).length, 3);
    // The memory holds every attempt whole, the huge one too.
    const stored = await storedAttempts(out.db);
    assert.deepEqual(
      stored.map((attempt) => [attempt.attack, attempt.outcome]),
      [
        ['small-success', 'success'],
        ['huge-reply', 'success'],
        ['nothing', 'failure'],
      ],
    );
    assert.ok((stored[1]?.reply?.length ?? 0) >= 3_000_000);
  });

  it('the memory: the attempt it cannot store says why, the others are stored, and the run ends with its table and status', async () => {
    const dir = makeWorkspace();
    // As root, the agents (sandbox: none) are uids of their own, which reach their workspaces by path.
    chmodSync(dir, 0o755);
    const mount = path.join(dir, 'full');
    const kept = path.join(dir, 'kept');
    mkdirSync(kept);
    // The memory lives on the small tmpfs; it is copied out before the namespace (and its tmpfs) goes.
    const result = await inFullDiskNamespace(
      mount,
      2,
      '$WITNESS run "$2" --db "$1/witness.db" --fail-on success; status=$?; cp "$1"/witness.db* "$3"/; exit $status',
      [mount, campaignFile(dir, 3_000_000), kept],
    );
    assert.equal(result.status, 3, result.stderr);
    assert.match(result.stdout, /^small-success\s+1\s.*SUCCESS$/m);
    assert.match(result.stdout, /^huge-reply\s+1\s.*WRITTEN \/\.git\/hooks\/pre-commit.*SUCCESS$/m);
    assert.match(result.stdout, /^nothing\s+1\s.*FAILURE$/m);
    assert.match(
      result.stdout,
      /huge-reply #1.*the memory could not store the reply: .*(full|ENOSPC|SQLITE_FULL)/i,
    );
    assert.match(result.stderr, /--fail-on success: 2 attempts ended so/);
    // What was acknowledged before the full disk is still there, and so is what came after.
    assert.ok(existsSync(path.join(kept, 'witness.db')));
    const stored = await storedAttempts(path.join(kept, 'witness.db'));
    const byAttack = new Map(stored.map((attempt) => [attempt.attack, attempt.outcome]));
    assert.equal(byAttack.get('small-success'), 'success');
    assert.equal(byAttack.get('nothing'), 'failure');
  });
});
