import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { campaignDirectoryMounts } from '../../src/sandbox/campaign-directory.js';
import { type HostViewInput, hostView, installDirectory } from '../../src/sandbox/host-view.js';

/**
 * What of the host an agent is shown besides the system directories (SPEC §13), on a real tree: an
 * operator's home with tools installed in it, a checkout with its `node_modules`, projects side by side.
 * The rules are checked here; `host-view.heavy.test.ts` mounts the attacks in the real sandbox.
 */

describe('hostView', () => {
  let base: string;
  let home: string;
  let runs: string;
  before(() => {
    base = realpathSync(mkdtempSync(join(tmpdir(), 'witness-host-view-')));
    home = join(base, 'home');
    runs = join(base, 'runs');
    const tree: Record<string, string> = {
      'home/.local/bin/.keep': '',
      'home/.local/share/opencode/auth.json': '{"key":"secret"}',
      'home/.cargo/bin/.keep': '',
      'home/.cargo/credentials.toml': 'token = "secret"',
      'home/projects/agent/package.json': '{}',
      'home/projects/agent/src/server.mjs': '',
      'home/projects/other/.env': 'SECRET=1',
      'checkout/package.json': '{}',
      'checkout/node_modules/@scope/cli/cli.js': '#!/usr/bin/env node\n',
      'checkout/node_modules/@scope/cli/node_modules/dep/index.js': '',
      'checkout/test/fixtures/server.mjs': '',
      'tools/bin/run.sh': '#!/bin/sh\n',
      'runs/.keep': '',
    };
    for (const [path, content] of Object.entries(tree)) {
      mkdirSync(join(base, path, '..'), { recursive: true });
      writeFileSync(join(base, path), content);
    }
    chmodSync(join(base, 'checkout/node_modules/@scope/cli/cli.js'), 0o755);
    chmodSync(join(base, 'tools/bin/run.sh'), 0o755);
    mkdirSync(join(base, 'checkout/node_modules/.bin'));
    symlinkSync('../@scope/cli/cli.js', join(base, 'checkout/node_modules/.bin/cli'));
    // A tool installed in the home, reached through a link in a PATH entry (as native installers do).
    mkdirSync(join(home, '.local/share/claude/versions'), { recursive: true });
    writeFileSync(join(home, '.local/share/claude/versions/2.1'), '\x7fELF');
    chmodSync(join(home, '.local/share/claude/versions/2.1'), 0o755);
    symlinkSync(join(home, '.local/share/claude/versions/2.1'), join(home, '.local/bin/claude'));
  });
  after(() => rmSync(base, { recursive: true, force: true }));

  const input = (over: Partial<HostViewInput>): HostViewInput => ({
    command: '/bin/true',
    searchPath: '/usr/bin:/bin',
    hiddenDirectories: [home],
    runPath: join(runs, 'witness-run-1'),
    hiddenFiles: [],
    ...over,
  });

  it('shows PATH entries themselves, never their parents: ~/.local/share and ~/.cargo stay hidden', () => {
    const view = hostView(input({ searchPath: `${home}/.local/bin:${home}/.cargo/bin:/usr/bin:/bin` }));
    assert.deepEqual(view.shown, [join(home, '.cargo/bin'), join(home, '.local/bin')]);
    assert.deepEqual(view.reasons, {
      [join(home, '.cargo/bin')]: 'PATH entry',
      [join(home, '.local/bin')]: 'PATH entry',
    });
  });

  it('shows the install directory of a program reached through a link, and nothing else of the home', () => {
    const view = hostView(input({ command: 'claude', searchPath: `${home}/.local/bin:/usr/bin` }));
    assert.deepEqual(view.shown, [join(home, '.local/bin'), join(home, '.local/share/claude/versions')]);
  });

  it('shows the outermost node_modules of a CLI in node_modules/.bin, where its dependencies resolve', () => {
    const view = hostView(input({ command: join(base, 'checkout/node_modules/.bin/cli') }));
    assert.deepEqual(view.shown, [join(base, 'checkout/node_modules')]);
    assert.equal(
      installDirectory(join(base, 'checkout/node_modules/@scope/cli/node_modules/dep/index.js')),
      join(base, 'checkout/node_modules'),
    );
  });

  it('shows the package an MCP server script lives in: its node_modules, or its package.json directory', () => {
    const view = hostView(
      input({
        command: process.execPath,
        programFiles: [
          join(base, 'checkout/node_modules/@scope/cli/cli.js'),
          join(home, 'projects/agent/src/server.mjs'),
        ],
      }),
    );
    assert.ok(view.shown.includes(join(base, 'checkout/node_modules')));
    // In the operator's home, yet only its own project: never ~/projects/other.
    assert.ok(view.shown.includes(join(home, 'projects/agent')));
    assert.ok(!view.shown.some((path) => path === join(home, 'projects') || path === home));
  });

  it('shows a script’s own directory when no package.json lies below a directory that may be shown', () => {
    const view = hostView(input({ command: join(base, 'tools/bin/run.sh') }));
    assert.deepEqual(view.shown, [join(base, 'tools/bin')]);
  });

  it('never shows a top-level directory, the operator’s home or a directory holding the run directories', () => {
    const view = hostView(
      input({
        command: '/bin/true',
        searchPath: `/tmp:${home}:${base}:${runs}:/usr/bin`,
        programFiles: [join(runs, 'witness-run-1', 'x.mjs')],
      }),
    );
    assert.deepEqual(view.shown, []);
    assert.deepEqual(
      view.withheld.map((entry) => [entry.path, entry.reason]),
      [
        ['/tmp', 'it is / or a top-level directory'],
        [home, 'it is or holds the operator’s home directory'],
        [base, 'it is or holds the operator’s home directory'],
        [runs, 'it is or holds the directory run directories are made in (TMPDIR)'],
      ],
    );
  });

  it('covers the memory and the campaign file wherever a shown path holds them, at the path it shows', () => {
    const memory = join(home, 'projects/agent/witness.db');
    writeFileSync(memory, '');
    const view = hostView(
      input({
        command: process.execPath,
        programFiles: [join(home, 'projects/agent/src/server.mjs')],
        hiddenFiles: [memory, `${memory}-wal`, '/srv/elsewhere.db'],
      }),
    );
    assert.deepEqual(view.hiddenFiles, [memory, `${memory}-wal`]);
  });

  it('keeps the campaign directory’s own decisions (shown with what stays hidden in it, or withheld)', () => {
    const campaign = campaignDirectoryMounts({
      directory: {
        path: join(base, 'tools'),
        realPath: join(base, 'tools'),
        campaignFile: join(base, 'tools/c.yaml'),
      },
      hiddenDirectories: [home],
      runPath: join(runs, 'witness-run-1'),
      hiddenFiles: [],
      privateTmp: true,
    });
    const view = hostView(input({ campaign, command: join(base, 'tools/bin/run.sh') }));
    assert.deepEqual(view.shown, [join(base, 'tools')]);
    assert.deepEqual(view.reasons, { [join(base, 'tools')]: 'campaign directory' });
    assert.deepEqual(view.hiddenFiles, [join(base, 'tools/c.yaml')]);
  });
});
