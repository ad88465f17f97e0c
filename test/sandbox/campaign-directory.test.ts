import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  type CampaignDirectoryInput,
  campaignDirectoryMounts,
  campaignDirectoryOf,
} from '../../src/sandbox/campaign-directory.js';

/** How the campaign directory appears in the sandbox: shown read-only, with what must stay hidden covered. */

const input = (over: Partial<CampaignDirectoryInput> & { path: string; realPath?: string }) => ({
  directory: {
    path: over.path,
    realPath: over.realPath ?? over.path,
    campaignFile: `${over.realPath ?? over.path}/campaign.yaml`,
  },
  hiddenDirectories: over.hiddenDirectories ?? ['/home/op'],
  runPath: over.runPath ?? '/tmp/witness-run-abc',
  hiddenFiles: over.hiddenFiles ?? [],
  privateTmp: over.privateTmp ?? true,
});

const MEMORY = (base: string) => ['', '-wal', '-shm', '-journal'].map((suffix) => `${base}${suffix}`);

describe('campaignDirectoryMounts', () => {
  it('shows a campaign directory under /tmp, covering the campaign file and the memory kept in it', () => {
    assert.deepEqual(
      campaignDirectoryMounts(
        input({
          path: '/tmp/camp',
          hiddenFiles: [...MEMORY('/tmp/camp/witness.db'), ...MEMORY('/srv/x.db')],
        }),
      ),
      {
        shown: true,
        path: '/tmp/camp',
        hiddenDirectories: [],
        hiddenFiles: [...MEMORY('/tmp/camp/witness.db'), '/tmp/camp/campaign.yaml'],
      },
    );
  });

  it('covers run directories made inside the campaign directory (TMPDIR pointing into it)', () => {
    assert.deepEqual(
      campaignDirectoryMounts(input({ path: '/srv/camp', runPath: '/srv/camp/runs/witness-run-1' })),
      {
        shown: true,
        path: '/srv/camp',
        hiddenDirectories: ['/srv/camp/runs', '/srv/camp/runs/witness-run-1'],
        hiddenFiles: ['/srv/camp/campaign.yaml'],
      },
    );
  });

  it('shows a directory that holds the operator’s home with the home covered again', () => {
    const mounts = campaignDirectoryMounts(input({ path: '/home' }));
    assert.equal(mounts.shown, true);
    assert.deepEqual(mounts.shown && mounts.hiddenDirectories, ['/home/op']);
  });

  it('shows a campaign directory reached through a symbolic link, covering its files at the linked path', () => {
    const mounts = campaignDirectoryMounts(
      input({
        path: '/tmp/link',
        realPath: '/tmp/real',
        hiddenFiles: ['/tmp/real/witness.db'],
        runPath: '/tmp/real/runs/witness-run-1',
      }),
    );
    assert.deepEqual(mounts, {
      shown: true,
      path: '/tmp/link',
      hiddenDirectories: ['/tmp/link/runs', '/tmp/link/runs/witness-run-1'],
      hiddenFiles: ['/tmp/link/witness.db', '/tmp/link/campaign.yaml'],
    });
  });

  for (const [name, over, reason] of [
    ['/', { path: '/' }, /root directory/],
    ['/tmp itself', { path: '/tmp', runPath: '/var/tmp/witness-run-1' }, /\/tmp itself/],
    ['the operator’s home', { path: '/home/op' }, /operator’s home/],
    [
      'the directory run directories are made in',
      { path: '/srv/t', runPath: '/srv/t/witness-run-1' },
      /TMPDIR/,
    ],
    ['inside the run directory', { path: '/tmp/witness-run-abc/x' }, /run directory/],
  ] as const) {
    it(`withholds ${name}, saying why`, () => {
      const mounts = campaignDirectoryMounts(input(over));
      assert.equal(mounts.shown, false);
      assert.match(mounts.shown ? '' : mounts.reason, reason);
    });
  }

  it('shows /tmp when there is no private /tmp to protect (sandbox: none never mounts anything)', () => {
    const mounts = campaignDirectoryMounts(
      input({ path: '/tmp', runPath: '/var/tmp/witness-run-1', privateTmp: false }),
    );
    assert.equal(mounts.shown, true);
  });
});

describe('campaignDirectoryOf', () => {
  let dir: string;
  before(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'witness-campaign-dir-')));
    mkdirSync(join(dir, 'real'));
    writeFileSync(join(dir, 'real', 'campaign.yaml'), 'name: x\n');
    symlinkSync(join(dir, 'real'), join(dir, 'link'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps the path the campaign names and resolves the real one', () => {
    assert.deepEqual(campaignDirectoryOf(join(dir, 'link', 'campaign.yaml')), {
      path: join(dir, 'link'),
      realPath: join(dir, 'real'),
      campaignFile: join(dir, 'real', 'campaign.yaml'),
    });
  });

  it('refuses a directory that does not exist, naming it', () => {
    assert.throws(() => campaignDirectoryOf(join(dir, 'gone', 'campaign.yaml')), {
      code: 'invalid_option',
      message: /gone.*cannot be resolved \(ENOENT\)/,
    });
  });
});
