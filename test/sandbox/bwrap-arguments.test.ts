import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type BwrapPlan, bwrapArguments, type SystemEntry } from '../../src/sandbox/bwrap-arguments.js';

/**
 * The bubblewrap command line as a pure function of the plan (SPEC §11, §13): what of the host is in the
 * sandbox, in which order, and as which user the agent runs.
 */

const SYSTEM: SystemEntry[] = [
  { path: '/usr', kind: 'directory' },
  { path: '/bin', kind: 'symlink', target: 'usr/bin' },
  { path: '/etc', kind: 'directory' },
];

const plan = (over: Partial<BwrapPlan> = {}): BwrapPlan => ({
  command: '/usr/bin/agent',
  args: ['--flag'],
  cwd: '/tmp/witness-run-1/attempt-a/workspace',
  env: { PATH: '/usr/bin', HOME: '/tmp/witness-run-1/attempt-a/home' },
  system: SYSTEM,
  shown: [],
  hiddenDirectories: [],
  hiddenFiles: [],
  writable: [
    { path: '/tmp/witness-run-1/attempt-a/workspace', childFd: 3 },
    { path: '/tmp/witness-run-1/attempt-a/home', childFd: 4 },
  ],
  network: 'host',
  ...over,
});

/** The arguments between two markers (both excluded). */
const between = (argv: string[], from: string, to: string) =>
  argv.slice(argv.indexOf(from) + 1, argv.indexOf(to, argv.indexOf(from) + 1));

describe('bwrapArguments', () => {
  it('shows the system directories and nothing else of the host: no `--bind / /`', () => {
    const argv = bwrapArguments(plan());
    assert.deepEqual(argv.slice(0, 7), [
      '--unshare-pid',
      '--unshare-ipc',
      '--unshare-uts',
      '--die-with-parent',
      '--new-session',
      '--cap-drop',
      'ALL',
    ]);
    const view = argv.slice(7, argv.indexOf('/tmp') + 1);
    assert.deepEqual(view, [
      '--ro-bind',
      '/usr',
      '/usr',
      '--symlink',
      'usr/bin',
      '/bin',
      '--ro-bind',
      '/etc',
      '/etc',
      '--dev',
      '/dev',
      '--proc',
      '/proc',
      '--ro-bind',
      '/proc/sys',
      '/proc/sys',
      '--ro-bind-try',
      '/proc/sysrq-trigger',
      '/proc/sysrq-trigger',
      '--perms',
      '1777',
      '--tmpfs',
      '/tmp',
    ]);
    for (let i = 0; i < argv.indexOf('--'); i++) {
      if (argv[i] === '--ro-bind' || argv[i] === '--bind') assert.notEqual(argv[i + 1], '/');
    }
  });

  it('makes the parents of the writable mounts (0755, once each), binds the held handles, then makes / read-only', () => {
    const argv = bwrapArguments(plan());
    assert.deepEqual(between(argv, '/tmp', '--remount-ro'), [
      '--perms',
      '0755',
      '--dir',
      '/tmp/witness-run-1',
      '--perms',
      '0755',
      '--dir',
      '/tmp/witness-run-1/attempt-a',
      '--bind-fd',
      '3',
      '/tmp/witness-run-1/attempt-a/workspace',
      '--bind-fd',
      '4',
      '/tmp/witness-run-1/attempt-a/home',
    ]);
    assert.equal(argv[argv.indexOf('--remount-ro') + 1], '/');
    assert.deepEqual(argv.slice(argv.indexOf('--')), ['--', '/usr/bin/agent', '--flag']);
  });

  it('shows host paths under synthetic parents, ancestors first; what is hidden in a shown path stays hidden', () => {
    const argv = bwrapArguments(
      plan({
        shown: ['/home/op/camp', '/home/op/.local/bin', '/usr/local/x'],
        hiddenDirectories: ['/home/op/camp/runs'],
        hiddenFiles: ['/home/op/camp/witness.db'],
        writable: [],
      }),
    );
    assert.deepEqual(between(argv, '/tmp', '--remount-ro'), [
      '--perms',
      '0755',
      '--dir',
      '/home',
      '--perms',
      '0755',
      '--dir',
      '/home/op',
      '--ro-bind',
      '/home/op/camp',
      '/home/op/camp',
      // inside /usr, bound already: no parent to make
      '--ro-bind',
      '/usr/local/x',
      '/usr/local/x',
      '--perms',
      '0755',
      '--dir',
      '/home/op/.local',
      '--ro-bind',
      '/home/op/.local/bin',
      '/home/op/.local/bin',
      '--tmpfs',
      '/home/op/camp/runs',
      '--ro-bind-try',
      '/dev/null',
      '/home/op/camp/witness.db',
    ]);
  });

  it('makes the parents of a workspace in a run directory hidden inside a shown campaign directory', () => {
    const argv = bwrapArguments(
      plan({
        shown: ['/srv/camp'],
        hiddenDirectories: ['/srv/camp/runs', '/srv/camp/runs/witness-run-1'],
        writable: [{ path: '/srv/camp/runs/witness-run-1/attempt-a/workspace', childFd: 3 }],
      }),
    );
    assert.deepEqual(between(argv, '/tmp', '--remount-ro'), [
      '--perms',
      '0755',
      '--dir',
      '/srv',
      '--ro-bind',
      '/srv/camp',
      '/srv/camp',
      '--tmpfs',
      '/srv/camp/runs',
      '--tmpfs',
      '/srv/camp/runs/witness-run-1',
      '--perms',
      '0755',
      '--dir',
      '/srv/camp/runs/witness-run-1/attempt-a',
      '--bind-fd',
      '3',
      '/srv/camp/runs/witness-run-1/attempt-a/workspace',
    ]);
  });

  it('runs the agent as its own host user through setpriv, keeping only what setpriv needs', () => {
    const argv = bwrapArguments(
      plan({ agentUser: { uid: 65534, gid: 65534, setprivPath: '/usr/bin/setpriv' } }),
    );
    assert.deepEqual(argv.slice(5, 13), [
      '--cap-drop',
      'ALL',
      '--cap-add',
      'CAP_SETUID',
      '--cap-add',
      'CAP_SETGID',
      '--cap-add',
      'CAP_SETPCAP',
    ]);
    assert.deepEqual(argv.slice(argv.indexOf('--')), [
      '--',
      '/usr/bin/setpriv',
      '--reuid=65534',
      '--regid=65534',
      '--clear-groups',
      '--inh-caps=-all',
      '--bounding-set=-all',
      '--',
      '/usr/bin/agent',
      '--flag',
    ]);
  });

  it('loads a seccomp filter and reports its init on the descriptors it is given', () => {
    const argv = bwrapArguments(plan({ infoFd: 5, seccompFd: 6 }));
    assert.deepEqual(between(argv, '/', '--chdir').slice(-4), ['--info-fd', '5', '--seccomp', '6']);
  });
});
