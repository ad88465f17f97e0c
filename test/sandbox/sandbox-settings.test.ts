import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_UID_POOL } from '../../src/sandbox/agent-uid-pool.js';
import { cgroupSupport } from '../../src/sandbox/attempt-cgroup.js';
import { resolveSandboxSettings } from '../../src/sandbox/sandbox-settings.js';

describe('resolveSandboxSettings', () => {
  let dir: string;
  before(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'witness-settings-')));
    mkdirSync(join(dir, 'home'));
    mkdirSync(join(dir, 'real'));
    writeFileSync(join(dir, 'real', 'campaign.yaml'), 'name: x\n');
    symlinkSync(join(dir, 'real'), join(dir, 'link'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('hides the operator’s home only when it exists (HOME=/nonexistent made every sandbox fail)', async () => {
    const missing = await resolveSandboxSettings({
      mode: 'none',
      hostEnv: { HOME: join(dir, 'nonexistent') },
    });
    assert.deepEqual(missing.hiddenDirectories, []);
    const present = await resolveSandboxSettings({ mode: 'none', hostEnv: { HOME: join(dir, 'home') } });
    assert.deepEqual(present.hiddenDirectories, [join(dir, 'home')]);
  });

  it('sandbox: none warns once that it is not containment, with a cgroup per attempt or why there is none', async () => {
    const off = await resolveSandboxSettings({
      mode: 'none',
      hostEnv: {},
      attemptCgroups: false,
      runningAsRoot: false,
    });
    assert.equal(off.cgroupParent, undefined);
    assert.equal(off.warnings?.length, 1);
    assert.match(
      off.warnings?.[0] ?? '',
      /^sandbox: none is not containment, and no cgroup can hold each attempt here \(turned off\): .*setsid, cd \//,
    );
    const here = await resolveSandboxSettings({ mode: 'none', hostEnv: {}, runningAsRoot: false });
    const cgroups = cgroupSupport();
    assert.equal(here.cgroupParent, cgroups.available ? cgroups.parent : undefined);
    assert.equal(here.warnings?.length, 1);
    assert.match(here.warnings?.[0] ?? '', /^sandbox: none is not containment: .*Witness's own user/);
    // Not root: the agent is Witness's own user.
    assert.equal(here.agentUser, undefined);
    assert.equal(here.uidPool, undefined);
  });

  it('sandbox: none as root: each attempt takes a uid of its own from runAs: or the default pool', async () => {
    const root = await resolveSandboxSettings({ mode: 'none', hostEnv: {}, runningAsRoot: true });
    assert.deepEqual(root.uidPool, DEFAULT_UID_POOL);
    assert.equal(root.agentUser, undefined);
    assert.equal(root.warnings?.length, 1);
    assert.match(
      root.warnings?.[0] ?? '',
      /^sandbox: none is not containment: each attempt runs as an unprivileged uid of its own, which cannot read root's files nor reach another attempt's, and .*every process running as its uid (is|are) killed/,
    );
    const range = await resolveSandboxSettings({
      mode: 'none',
      hostEnv: {},
      runningAsRoot: true,
      runAs: '2000000-2000007',
    });
    assert.deepEqual(
      { first: range.uidPool?.first, last: range.uidPool?.last, skip: range.uidPool?.skipAccounts },
      { first: 2000000, last: 2000007, skip: false },
    );
    const one = await resolveSandboxSettings({ mode: 'none', hostEnv: {}, runningAsRoot: true, runAs: 4242 });
    assert.deepEqual([one.uidPool?.first, one.uidPool?.last], [4242, 4242]);
  });

  it('hides the memory under the name it was given and under its real directory', async () => {
    const settings = await resolveSandboxSettings({
      mode: 'none',
      hostEnv: {},
      memoryFile: join(dir, 'link', 'witness.db'),
    });
    assert.deepEqual(settings.hiddenFiles, [
      join(dir, 'link', 'witness.db'),
      join(dir, 'link', 'witness.db-wal'),
      join(dir, 'link', 'witness.db-shm'),
      join(dir, 'link', 'witness.db-journal'),
      join(dir, 'real', 'witness.db'),
      join(dir, 'real', 'witness.db-wal'),
      join(dir, 'real', 'witness.db-shm'),
      join(dir, 'real', 'witness.db-journal'),
    ]);
  });

  it('records the campaign directory as the campaign names it and as it really is', async () => {
    const settings = await resolveSandboxSettings({
      mode: 'none',
      hostEnv: {},
      campaignFile: join(dir, 'link', 'campaign.yaml'),
    });
    assert.deepEqual(settings.campaignDirectory, {
      path: join(dir, 'link'),
      realPath: join(dir, 'real'),
      campaignFile: join(dir, 'real', 'campaign.yaml'),
    });
  });
});
