import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { TargetError } from '../../src/errors.js';
import { CommandTarget } from '../../src/targets/command-target.js';
import { needsBubblewrap } from '../support/requirements.js';
import { waitUntil } from '../support/wait-until.js';

/** Why the tests that run an out-of-process agent (in its sandbox) skip here, if they do. */
const bubblewrap = await needsBubblewrap();

const sh = (script: string) => ({ command: '/bin/sh', args: ['-c', script, 'agent', '{prompt}'] });

describe('CommandTarget', { skip: bubblewrap }, () => {
  let ws: string;
  beforeEach(() => {
    ws = realpathSync(mkdtempSync(join(tmpdir(), 'witness-cmd-')));
  });
  afterEach(() => rmSync(ws, { recursive: true, force: true }));

  it('runs in the workspace, passes the prompt as an argument without a shell parsing it, replies with stdout', async () => {
    const target = new CommandTarget(sh('pwd > where.txt; printf "%s" "$1" > prompt.txt; echo "done"'));
    const prompt = 'Summarize `README.md`; $(touch pwned) && rm -rf /';
    const response = await target.send({ prompt, workspace: ws });
    assert.equal(response.reply, 'done\n');
    assert.equal(readFileSync(join(ws, 'where.txt'), 'utf8').trim(), ws);
    assert.equal(readFileSync(join(ws, 'prompt.txt'), 'utf8'), prompt);
    assert.equal(existsSync(join(ws, 'pwned')), false);
    const process = response.transcript.find((event) => event.kind === 'process');
    assert.deepEqual(process, {
      kind: 'process',
      command: '/bin/sh',
      args: ['-c', 'pwd > where.txt; printf "%s" "$1" > prompt.txt; echo "done"', 'agent', prompt],
      exitCode: 0,
      signal: null,
      timedOut: false,
      stderr: '',
      stdoutTruncated: false,
    });
  });

  it('sets PWD to the workspace, whatever PWD the caller had', async () => {
    const target = new CommandTarget({ ...sh('printf "%s" "$PWD"'), baseEnv: { PWD: '/somewhere/else' } });
    assert.equal((await target.send({ prompt: 'x', workspace: ws })).reply, ws);
  });

  it("gives the agent the attack's variables, under the target's own", async () => {
    const target = new CommandTarget({ ...sh('printf "%s %s" "$CANARY" "$OWN"'), env: { OWN: 'target' } });
    const response = await target.send({
      prompt: 'x',
      workspace: ws,
      env: { CANARY: 'canary-5', OWN: 'from the attack' },
    });
    assert.equal(response.reply, 'canary-5 target');
  });

  it('writes a stdin template with the prompt substituted', async () => {
    const target = new CommandTarget({ command: '/bin/cat', stdin: 'PROMPT: {prompt}\nWS: {workspace}\n' });
    const response = await target.send({ prompt: 'hello', workspace: ws });
    assert.equal(response.reply, `PROMPT: hello\nWS: ${ws}\n`);
  });

  it('kills the whole process group on timeout, background children included', async () => {
    const target = new CommandTarget({
      ...sh('(sleep 1; echo late > late.txt) & sleep 30'),
      timeoutMs: 200,
    });
    const started = Date.now();
    await assert.rejects(target.send({ prompt: 'x', workspace: ws }), (error: unknown) => {
      assert.ok(error instanceof TargetError);
      assert.equal(error.message, 'the command timed out after 200 ms');
      return true;
    });
    // Well short of the 30 s sleep, with room for a loaded machine.
    assert.ok(Date.now() - started < 20_000);
    await delay(1_500);
    assert.equal(existsSync(join(ws, 'late.txt')), false);
  });

  it('kills background processes left behind after a normal exit', async () => {
    // The background subshell would sleep 30 s and then write. The agent runs in its own PID namespace,
    // so the pid it could report means nothing here: the sleep is found by its unique argument instead.
    const marker = `30.${process.pid}${Date.now() % 100_000}`;
    // Control: the scan sees such a sleeper when one runs.
    const control = spawn('sleep', [marker], { stdio: 'ignore' });
    for (let waited = 0; sleepersWith(marker) === 0 && waited < 20_000; waited += 50) await delay(50);
    assert.equal(sleepersWith(marker), 1, 'the scan finds a running sleeper');
    control.kill('SIGKILL');
    await once(control, 'exit');
    const target = new CommandTarget(sh(`(sleep ${marker}; echo late > late.txt) & echo quick`));
    const response = await target.send({ prompt: 'x', workspace: ws });
    assert.equal(response.reply, 'quick\n');
    // send() resolves only after the sandbox is gone, so nothing may be left; polled, generous under load.
    for (let waited = 0; sleepersWith(marker) > 0 && waited < 20_000; waited += 50) await delay(50);
    assert.equal(sleepersWith(marker), 0, 'the background process was killed');
    assert.equal(existsSync(join(ws, 'late.txt')), false);
  });

  it('reports a non-zero exit and a missing program as TargetErrors carrying the transcript', async () => {
    const failing = new CommandTarget(sh('echo partial; echo oops >&2; exit 3'));
    await assert.rejects(failing.send({ prompt: 'x', workspace: ws }), (error: unknown) => {
      assert.ok(error instanceof TargetError);
      assert.equal(error.message, 'the command exited with status 3; its stderr ends: oops');
      assert.deepEqual(error.transcript.at(-1), { kind: 'message', role: 'assistant', text: 'partial\n' });
      return true;
    });
    const missing = new CommandTarget({ command: join(ws, 'no-such-agent') });
    await assert.rejects(missing.send({ prompt: 'x', workspace: ws }), /could not be started/);
  });

  it('bounds the reply', async () => {
    const target = new CommandTarget({ ...sh('yes | head -c 100000'), maxOutputBytes: 10 });
    const response = await target.send({ prompt: 'x', workspace: ws });
    assert.equal(response.reply, 'y\ny\ny\ny\ny\n');
    assert.equal(
      response.transcript.some((event) => event.kind === 'process' && event.stdoutTruncated),
      true,
    );
  });

  it('substitutes placeholders once: a prompt mentioning {workspace} or {prompt} reaches the agent as written', async () => {
    const target = new CommandTarget({
      command: '/bin/sh',
      args: ['-c', 'printf "%s|" "$@"', 'agent', '{prompt}', '{workspace}'],
      stdin: 'S:{prompt}',
    });
    const prompt = 'copy {workspace}/a to {prompt} please';
    const response = await target.send({ prompt, workspace: ws });
    assert.equal(response.reply, `${prompt}|${ws}|`);
    const echo = new CommandTarget({ command: '/bin/cat', stdin: '{prompt}/{workspace}' });
    assert.equal((await echo.send({ prompt: '{workspace}', workspace: ws })).reply, `{workspace}/${ws}`);
  });

  it('keeps the partial transcript and stderr when the attempt budget (a timeout signal) stops the agent', async () => {
    const target = new CommandTarget(sh('echo step-one; echo working >&2; : > printed; sleep 30'));
    // The budget runs out once the agent has printed (it marks that in its workspace), as an attempt's
    // AbortSignal.timeout would: the same TimeoutError, but never before the output exists (a 300 ms
    // timeout once fired first on a loaded machine).
    const budget = new AbortController();
    const sending = target.send({ prompt: 'x', workspace: ws, signal: budget.signal });
    await waitUntil('the agent to print', () => existsSync(join(ws, 'printed')));
    budget.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
    await assert.rejects(sending, (error: unknown) => {
      assert.ok(error instanceof TargetError, 'a timed-out attempt is a target failure, not a cancellation');
      assert.match(error.message, /^the command was stopped: .*; its stderr ends: working$/);
      assert.deepEqual(error.transcript.at(-1), { kind: 'message', role: 'assistant', text: 'step-one\n' });
      return true;
    });
    const cancelled = new AbortController();
    const run = target.send({ prompt: 'x', workspace: ws, signal: cancelled.signal });
    setTimeout(() => cancelled.abort(new Error('interrupted')), 200);
    await assert.rejects(run, /interrupted/);
  });

  it('stops the agent when the attempt is given up while its containment is being prepared', async () => {
    // send() awaits the containment's settings before it launches the agent; an abort in that wait fired
    // before the abort listener existed, and the agent then ran on to its own timeout (60 s here).
    const target = new CommandTarget({ ...sh(': > started; sleep 60; : > finished'), timeoutMs: 120_000 });
    const given = new AbortController();
    const started = Date.now();
    const sending = target.send({ prompt: 'x', workspace: ws, signal: given.signal });
    given.abort(new Error('given up'));
    await assert.rejects(sending, /given up/);
    // Generous: the agent is stopped at once, well before its 60 s sleep could end.
    assert.ok(Date.now() - started < 30_000, 'the agent was stopped, not left to run');
    assert.equal(existsSync(join(ws, 'finished')), false);
  });

  it('keeps the head and the tail of a long stderr', async () => {
    const target = new CommandTarget(
      sh('head -c 40000 /dev/zero | tr "\\0" a >&2; echo LAST-LINE >&2; exit 1'),
    );
    await assert.rejects(target.send({ prompt: 'x', workspace: ws }), (error: unknown) => {
      assert.ok(error instanceof TargetError);
      assert.match(error.message, /LAST-LINE$/);
      const process = error.transcript.find((event) => (event as { kind?: string }).kind === 'process') as {
        stderr: string;
      };
      assert.match(process.stderr, /^a{8192}\n… \[23626 bytes of stderr not kept\] …\na+LAST-LINE\n$/);
      return true;
    });
  });
});

/** Processes on this machine whose command line is `sleep <marker>`. */
function sleepersWith(marker: string): number {
  let count = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z') continue; // already dead
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (argv[0]?.split('/').at(-1) === 'sleep' && argv[1] === marker) count++;
    } catch {
      // The process ended while we looked.
    }
  }
  return count;
}
