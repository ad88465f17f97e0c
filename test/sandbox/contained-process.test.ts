import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  closeSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, beforeEach, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { agentEnvironment } from '../../src/sandbox/agent-environment.js';
import {
  bwrapArguments,
  isolationArguments,
  systemViewArguments,
} from '../../src/sandbox/bwrap-arguments.js';
import {
  type ContainedProcess,
  type ContainedProcessOptions,
  type ContainmentChoice,
  type HeldDirectory,
  startContained,
} from '../../src/sandbox/contained-process.js';
import { systemEntries } from '../../src/sandbox/host-view.js';
import { namespaceListenersAvailable } from '../../src/sandbox/network-namespace.js';
import { detectSandbox } from '../../src/sandbox/sandbox-availability.js';
import { runNode } from '../sources/support/child-process.js';
import { needsBubblewrap } from '../support/requirements.js';

const availability = await detectSandbox();
const skip = await needsBubblewrap();
const bwrap: ContainmentChoice = availability.available
  ? { mode: 'bwrap', bwrapPath: availability.bwrapPath }
  : { mode: 'none' };

function hold(path: string): HeldDirectory {
  return { path, fd: openSync(path, constants.O_RDONLY | constants.O_DIRECTORY) };
}

function countResources(kind: string): number {
  return process.getActiveResourcesInfo().filter((name) => name === kind).length;
}

/** Pids of live processes whose command line holds `marker`. */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (!readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(marker)) continue;
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      found.push(Number(name));
    } catch {
      // gone
    }
  }
  return found;
}

/** Whether `pid` runs (killed and waiting to be reaped counts as gone). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
}

async function collect(process: ContainedProcess) {
  let stdout = '';
  let stderr = '';
  process.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  process.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  process.stdin.end();
  const end = await process.ended;
  return { end, stdout, stderr };
}

describe('a process contained by bubblewrap', { skip }, () => {
  let runDir: string;
  let workspace: HeldDirectory;
  let home: HeldDirectory;
  let outside: string;
  const held: number[] = [];
  beforeEach(() => {
    runDir = realpathSync(mkdtempSync(join(tmpdir(), 'witness-run-')));
    mkdirSync(join(runDir, 'a1', 'workspace'), { recursive: true });
    mkdirSync(join(runDir, 'a1', 'home'), { recursive: true });
    mkdirSync(join(runDir, 'a2', 'workspace'), { recursive: true });
    writeFileSync(join(runDir, 'a2', 'workspace', 'other.txt'), 'another attempt');
    workspace = hold(join(runDir, 'a1', 'workspace'));
    home = hold(join(runDir, 'a1', 'home'));
    held.push(workspace.fd, home.fd);
    // A host directory outside every attempt (not under /tmp, which the sandbox replaces).
    outside = realpathSync(mkdtempSync(join('/var/tmp', 'witness-outside-')));
  });
  afterEach(() => {
    for (const fd of held.splice(0)) closeSync(fd);
    rmSync(runDir, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });
  after(() => undefined);

  const options = (
    script: string,
    extra: Partial<ContainedProcessOptions> = {},
  ): ContainedProcessOptions => ({
    containment: bwrap,
    command: '/bin/sh',
    args: ['-c', script],
    workspace,
    home,
    env: agentEnvironment({ hostEnv: { PATH: '/usr/bin:/bin' }, home: home.path, tmp: '/tmp' }),
    hiddenDirectories: [runDir],
    ...extra,
  });

  it('kills a setsid daemon when the agent exits: nothing is written after the end', async () => {
    const { end, stdout } = await collect(
      startContained(
        options('setsid sh -c "sleep 0.3; echo late > late.txt" </dev/null >/dev/null 2>&1 & echo started'),
      ),
    );
    assert.equal(stdout, 'started\n');
    assert.equal(end.code, 0);
    assert.equal(end.allGone, true);
    await delay(800);
    assert.equal(existsSync(join(workspace.path, 'late.txt')), false);
  });

  it('ends within its bounds when a daemon holds stdout open', async () => {
    const started = Date.now();
    const { end, stdout } = await collect(
      startContained(options('setsid sleep 60 & echo started', { drainMs: 200 })),
    );
    assert.equal(stdout, 'started\n');
    assert.equal(end.allGone, true);
    assert.ok(Date.now() - started < 20_000, 'the run did not wait for the daemon');
  });

  it('leaves no timer behind once it has ended: a finished `witness run` exits at once', async () => {
    // Seen as every `witness run` (and every test file with an agent) staying alive reapMs (5 s) after its
    // last attempt: the bounds on reaping and draining were timers nobody cleared. Here both bounds are
    // ten minutes, so a script that leaked either would outlive the generous 60 s allowed.
    const script = join(runDir, 'ends.mjs');
    const module = (relative: string) => JSON.stringify(new URL(relative, import.meta.url).href);
    writeFileSync(
      script,
      `import { startContained } from ${module('../../src/sandbox/contained-process.js')};
import { agentEnvironment } from ${module('../../src/sandbox/agent-environment.js')};
import { openSync, constants } from 'node:fs';
const [bwrapPath, workspace, home] = process.argv.slice(2);
const hold = (path) => ({ path, fd: openSync(path, constants.O_RDONLY | constants.O_DIRECTORY) });
const agent = startContained({
  containment: { mode: 'bwrap', bwrapPath },
  command: '/bin/sh',
  args: ['-c', 'echo done'],
  workspace: hold(workspace),
  home: hold(home),
  env: agentEnvironment({ hostEnv: { PATH: '/usr/bin:/bin' }, home, tmp: '/tmp' }),
  reapMs: 600_000,
  drainMs: 600_000,
});
agent.stdin.end();
let stdout = '';
agent.stdout.on('data', (chunk) => { stdout += chunk; });
const end = await agent.ended;
process.stdout.write(JSON.stringify({ stdout, allGone: end.allGone }));
`,
    );
    assert.ok(bwrap.mode === 'bwrap');
    const result = await runNode(script, [bwrap.bwrapPath, workspace.path, home.path], { timeoutMs: 60_000 });
    assert.equal(
      result.signal,
      null,
      'the script had to be killed: a timer of the ended process kept it alive',
    );
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), { stdout: 'done\n', allGone: true });
  });

  it('stop() kills the agent and everything it started', async () => {
    const process = startContained(options('setsid sh -c "sleep 0.5; echo late > late.txt" & sleep 60'));
    process.stdin.end();
    await delay(200);
    const end = await process.stop();
    assert.equal(end.allGone, true);
    // stop() kills the namespace's init and then bwrap: bwrap itself dies by SIGKILL, or (when it saw its
    // init die first, seen on a loaded machine) exits with the status of a SIGKILLed child, 128 + 9.
    assert.ok(end.signal === 'SIGKILL' || end.code === 137, `code ${end.code}, signal ${end.signal}`);
    await delay(800);
    assert.equal(existsSync(join(workspace.path, 'late.txt')), false);
  });

  it('gives the agent only the allowlisted environment', async () => {
    const env = agentEnvironment({
      hostEnv: { PATH: '/usr/bin:/bin', OPENAI_API_KEY: 'sk-canary-1234', WITNESS_DB: '/x.db', KEEP: 'kept' },
      passEnv: ['KEEP'],
      env: { MODE: 'test' },
      home: home.path,
      tmp: '/tmp',
    });
    const { stdout } = await collect(startContained(options('env', { env })));
    const names = stdout
      .trim()
      .split('\n')
      .map((line) => line.split('=')[0])
      .filter((name) => name !== 'PWD' && name !== 'SHLVL' && name !== '_')
      .sort();
    assert.deepEqual(names, ['HOME', 'KEEP', 'MODE', 'PATH', 'TMPDIR']);
    assert.equal(stdout.includes('sk-canary-1234'), false);
  });

  it('lets the agent write its workspace and its home, and nowhere on the host', async () => {
    const { end, stderr } = await collect(
      startContained(
        options(
          `echo w > w.txt && echo h > "$HOME/.bashrc" && echo t > /tmp/t && (echo o > ${outside}/o.txt; echo e > /etc/witness-probe; echo r > /planted; true)`,
          { shown: [outside] },
        ),
      ),
    );
    assert.equal(end.code, 0, stderr);
    // A shown host path, a system directory and the synthetic root are all read-only.
    assert.equal(stderr.match(/Read-only file system/g)?.length, 3, stderr);
    assert.equal(readFileSync(join(workspace.path, 'w.txt'), 'utf8'), 'w\n');
    assert.equal(readFileSync(join(home.path, '.bashrc'), 'utf8'), 'h\n');
    assert.equal(existsSync(join(outside, 'o.txt')), false);
    assert.equal(existsSync('/etc/witness-probe'), false);
  });

  it('shows the host only where asked: nothing of /var, /root, /work or /home beyond the paths shown', async () => {
    writeFileSync(join(outside, 'visible.txt'), 'shown');
    const { stdout } = await collect(
      startContained(
        options(
          `ls / | tr '\n' ' '; echo; cat ${outside}/visible.txt; echo; ls ${join(outside, '..')} | wc -l`,
          {
            shown: [outside],
          },
        ),
      ),
    );
    const [top, visible, siblings] = stdout.split('\n');
    // The synthetic root holds the system directories, /dev, /proc, /tmp and the parents of what is shown.
    assert.deepEqual(
      top
        ?.trim()
        .split(' ')
        .filter((name) => !['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32', 'opt'].includes(name)),
      ['dev', 'etc', 'proc', 'tmp', 'usr', 'var'],
    );
    assert.equal(visible, 'shown');
    // /var/tmp holds only the shown directory (the host's /var/tmp holds others: the operator's, other runs').
    assert.equal(siblings, '1');
  });

  it('hides other attempts and hidden directories and files', async () => {
    const operatorHome = realpathSync(mkdtempSync(join('/var/tmp', 'witness-operator-')));
    writeFileSync(join(operatorHome, '.secret'), 'operator');
    const memory = join(outside, 'witness.db');
    writeFileSync(memory, 'stored results');
    try {
      const { stdout } = await collect(
        startContained(
          options(
            `ls ${runDir}; ls ${runDir}/a2 2>&1; cat ${operatorHome}/.secret 2>&1; cat ${memory} 2>&1; echo end`,
            // The `-journal` of a WAL memory does not exist: hiding it must not stop the sandbox (bwrap
            // cannot create a mount point in a read-only bound directory; seen as every command agent failing).
            { shown: [outside], hiddenFiles: [memory, `${memory}-journal`] },
          ),
        ),
      );
      assert.equal(stdout.includes('another attempt'), false);
      assert.equal(stdout.includes('operator\n'), false);
      assert.match(stdout, /^a1\n/);
      assert.match(stdout, /No such file/);
      assert.equal(stdout.includes('stored results'), false);
      assert.match(stdout, /end\n$/);
    } finally {
      rmSync(operatorHome, { recursive: true, force: true });
    }
  });

  it('leaves the agent no capability, so root cannot remount a shown path writable or unmount a hidden file', async () => {
    // The attack: Witness runs as root (CI, a container) and an agent with CAP_SYS_ADMIN undoes its own
    // sandbox from inside: it remounts a read-only host path writable and writes the host, or unmounts
    // what covers a hidden file (the memory) and reads it.
    const secret = join(outside, 'witness.db');
    writeFileSync(secret, 'operator-secret');
    const escapeScript = [
      'grep CapEff /proc/self/status',
      `mount -o remount,bind,rw ${outside} 2>&1`,
      `echo o > ${outside}/o.txt 2>&1`,
      `umount ${secret} 2>&1`,
      `cat ${secret} 2>&1`,
      'echo end',
    ].join('; ');
    const { stdout } = await collect(
      startContained(options(escapeScript, { shown: [outside], hiddenFiles: [secret] })),
    );
    assert.match(stdout, /CapEff:\s+0+\n/);
    assert.match(stdout, /end\n$/);
    assert.equal(existsSync(join(outside, 'o.txt')), false);
    assert.equal(stdout.includes('operator-secret'), false);
    if (process.getuid?.() === 0 && availability.available) {
      // Control: the same sandbox as root with every capability (no `--cap-drop ALL`, no user of its own)
      // is escaped by the same script, so the assertions above can see an escape when there is one.
      const argv = bwrapArguments({
        command: '/bin/sh',
        args: ['-c', escapeScript],
        cwd: '/',
        env: { PATH: '/usr/bin:/bin' },
        system: systemEntries(),
        shown: [outside],
        hiddenDirectories: [],
        hiddenFiles: [secret],
        writable: [],
        network: 'host',
      });
      const control = argv.filter((arg, i, all) => arg !== 'ALL' && all[i + 1] !== 'ALL');
      assert.equal(control.length, argv.length - 2);
      const escaped = spawnSync(availability.bwrapPath, control, { encoding: 'utf8' });
      assert.equal(readFileSync(join(outside, 'o.txt'), 'utf8'), 'o\n');
      assert.ok(escaped.stdout.includes('operator-secret'), escaped.stdout);
    }
  });

  it('keeps /proc/sys read-only, so root cannot set a host-wide sysctl', async () => {
    // The attack: without capabilities uid 0 still passes the owner check on sysctl files, and
    // `kernel.core_pattern = |/payload` runs the payload as root on the host at the next crash. The probe
    // writes back the value already there, so even a sandbox that fails this test changes nothing.
    const probe =
      'v=$(cat /proc/sys/kernel/core_pattern); printf "%s\\n" "$v" > /proc/sys/kernel/core_pattern && echo WROTE; echo end';
    const { stdout } = await collect(startContained(options(probe)));
    assert.match(stdout, /end\n$/);
    assert.equal(stdout.includes('WROTE'), false, stdout);
    if (process.getuid?.() === 0 && availability.available) {
      // Control: bubblewrap's own /proc, without the read-only cover, lets root write it.
      const view = systemViewArguments(systemEntries());
      const args = [...isolationArguments(), ...view].filter(
        (arg, i, all) => !arg.startsWith('/proc/sys') && !all[i + 1]?.startsWith('/proc/sys'),
      );
      assert.equal(args.length, isolationArguments().length + view.length - 6);
      const control = spawnSync(availability.bwrapPath, [...args, '--', '/bin/sh', '-c', probe], {
        encoding: 'utf8',
      });
      assert.match(control.stdout, /WROTE/);
    }
  });

  it('mounts the held workspace even when its path was swapped for a symlink', async () => {
    // The attack: the workspace path is renamed away and replaced by a link to a directory the agent must
    // not write. The sandbox mounts the held handle, so the write lands in the real workspace.
    const moved = join(runDir, 'a1', 'moved');
    renameSync(workspace.path, moved);
    symlinkSync(outside, workspace.path);
    const { end } = await collect(startContained(options('echo x > planted.txt')));
    assert.equal(end.code, 0);
    assert.equal(existsSync(join(outside, 'planted.txt')), false);
    assert.equal(readFileSync(join(moved, 'planted.txt'), 'utf8'), 'x\n');
  });

  it('stopped before bubblewrap reports its init, leaves no process behind and holds nothing open', async () => {
    // The race: an attempt given up in its first milliseconds killed the outer bwrap after its clone but
    // before its --info-fd report; the child lived on (blocked on --block-fd under network: proxy, so a
    // test file that did this never exited; otherwise running the agent unwatched). Many tries, because
    // the window is a few hundred microseconds wide.
    const marker = `witness-stop-race-${process.pid}-${Date.now()}`;
    const proxy = namespaceListenersAvailable() === undefined;
    const pipesBefore = countResources('PipeWrap');
    for (let attempt = 0; attempt < 40; attempt++) {
      const network = proxy && attempt % 2 === 0 ? 'proxy' : 'none';
      const contained = startContained(
        options(`: ${marker}; sleep 60`, {
          network,
          namespaceListeners:
            network === 'proxy' ? [{ port: 3128, onConnection: (socket) => socket.destroy() }] : [],
          reapMs: 2_000,
        }),
      );
      // Let the outer bwrap get a little way (clone, report) on some tries and none on others.
      if (attempt % 4 >= 2) await delay(attempt % 8);
      const end = await contained.stop();
      assert.equal(end.allGone, true);
    }
    await delay(200);
    assert.deepEqual(processesWith(marker), [], 'no process of a stopped sandbox lives on');
    assert.ok(countResources('PipeWrap') <= pipesBefore, 'no pipe of a stopped sandbox keeps Witness alive');
  });

  it('network: none leaves only loopback', async () => {
    const { stdout } = await collect(startContained(options('cat /proc/net/dev', { network: 'none' })));
    const interfaces = stdout
      .split('\n')
      .slice(2)
      .filter((line) => line.trim() !== '')
      .map((line) => line.split(':')[0]?.trim());
    assert.deepEqual(interfaces, ['lo']);
  });
});

describe('a process run with sandbox: none', () => {
  let dir: string;
  const held: number[] = [];
  beforeEach(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'witness-none-')));
    mkdirSync(join(dir, 'workspace'));
    mkdirSync(join(dir, 'home'));
  });
  afterEach(() => {
    for (const fd of held.splice(0)) closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  });
  const options = (script: string): ContainedProcessOptions => {
    const workspace = hold(join(dir, 'workspace'));
    const home = hold(join(dir, 'home'));
    held.push(workspace.fd, home.fd);
    return {
      containment: { mode: 'none' },
      command: '/bin/sh',
      args: ['-c', script],
      workspace,
      home,
      env: agentEnvironment({ hostEnv: { PATH: '/usr/bin:/bin' }, home: home.path, tmp: home.path }),
    };
  };

  it('kills its session, and a daemon that left the session but works in the workspace', async () => {
    // Each child writes its pid (after setsid, for the daemon) and then waits far longer than any test;
    // the agent ends only once both are written. No race with a short sleep: under load a daemon still
    // forking died with the session's group (uncounted), and a Witness slow to see the agent's exit found
    // a daemon whose short sleep had already ended.
    const { end } = await collect(
      startContained(
        options(
          "sh -c 'echo $$ > in-session.pid; exec sleep 60' & " +
            "setsid sh -c 'echo $$ > left-session.pid; exec sleep 60' </dev/null >/dev/null 2>&1 & " +
            'until [ -s in-session.pid ] && [ -s left-session.pid ]; do sleep 0.01; done; echo ok',
        ),
      ),
    );
    assert.equal(end.allGone, true);
    // The in-session child dies with the session's group; the one that left is found by its cwd.
    assert.ok(end.killedStragglers >= 1, `killed ${end.killedStragglers}`);
    for (const name of ['in-session.pid', 'left-session.pid']) {
      const pid = Number(readFileSync(join(dir, 'workspace', name), 'utf8'));
      assert.ok(pid > 0, name);
      assert.equal(running(pid), false, `${name}: ${pid} still runs`);
    }
  });

  it('ends within drainMs when a daemon holds stdout', async () => {
    const started = Date.now();
    const { end } = await collect(startContained({ ...options('setsid sleep 60 & echo ok'), drainMs: 100 }));
    assert.ok(Date.now() - started < 20_000);
    assert.equal(end.code, 0);
  });
});
