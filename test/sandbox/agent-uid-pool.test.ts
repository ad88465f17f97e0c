import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import { InvalidOptionError } from '../../src/errors.js';
import { leaseUid, type UidPool } from '../../src/sandbox/agent-uid-pool.js';
import { RunAsSchema, runAsUids } from '../../src/sandbox/agent-user.js';
import { processesOfUid } from '../../src/sandbox/process-scan.js';

/**
 * The uids of `sandbox: none` as root (SPEC §13: one uid per concurrent attempt from a range): two
 * attempts at once never share one, a uid something already runs as is never given, and releasing one
 * kills what still runs as it.
 */

const skip = process.getuid?.() !== 0 ? 'leases are taken by root only (the CI lanes run as root)' : false;

// A block of its own, far from the default pool, so other test processes leasing at once are not met.
const pool = (first: number, last: number): UidPool => ({
  first,
  last,
  skipAccounts: false,
  source: 'test uids',
});

describe('runAs: ranges', () => {
  it('parses a range, and refuses uid 0 and a reversed range', () => {
    assert.deepEqual(runAsUids(RunAsSchema.parse('2000-2003')), { first: 2000, last: 2003 });
    assert.deepEqual(runAsUids(RunAsSchema.parse(1234)), { first: 1234, last: 1234 });
    assert.deepEqual(runAsUids(RunAsSchema.parse('1234:99')), { first: 1234, last: 1234 });
    assert.equal(runAsUids(undefined), undefined);
    assert.equal(RunAsSchema.safeParse('0-3').success, false);
    assert.equal(RunAsSchema.safeParse('9-3').success, false);
  });
});

describe('leaseUid', { skip }, () => {
  const base = 1_879_100_000 + (process.pid % 1000) * 8;

  it('gives concurrent leases different uids, refuses past the pool, and frees a released uid', () => {
    const a = leaseUid(pool(base, base + 1));
    const b = leaseUid(pool(base, base + 1));
    try {
      assert.notEqual(a.user.uid, b.user.uid);
      assert.throws(() => leaseUid(pool(base, base + 1)), InvalidOptionError);
    } finally {
      a.release();
    }
    const c = leaseUid(pool(base, base + 1));
    assert.equal(c.user.uid, a.user.uid);
    c.release();
    b.release();
  });

  it('never gives a uid something runs as; releasing a lease kills what runs as its uid', async () => {
    const runAs = (uid: number) => {
      const child = spawn('setpriv', [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', 'sleep', '30'], {
        stdio: 'ignore',
      });
      return new Promise<void>((done) => child.once('exit', () => done()));
    };
    const running = async (uid: number) => {
      while (processesOfUid(uid).length === 0) await new Promise((done) => setTimeout(done, 10));
    };
    const busy = base + 4;
    const sleeper = runAs(busy);
    await running(busy);
    // Something (not an attempt) runs as `busy`: it would reach the attempt's files.
    assert.throws(() => leaseUid(pool(busy, busy)), InvalidOptionError);
    const lease = leaseUid(pool(busy, busy + 1));
    assert.equal(lease.user.uid, busy + 1);
    // What the attempt left running as its uid dies with the lease.
    const left = runAs(busy + 1);
    await running(busy + 1);
    lease.release();
    await left;
    assert.deepEqual(processesOfUid(busy + 1), []);
    for (const pid of processesOfUid(busy)) process.kill(pid, 'SIGKILL');
    await sleeper;
  });
});
