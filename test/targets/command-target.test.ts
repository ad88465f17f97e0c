import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { TargetError } from '../../src/errors.js';
import { CommandTarget } from '../../src/targets/command-target.js';

const sh = (script: string) => ({ command: '/bin/sh', args: ['-c', script, 'agent', '{prompt}'] });

describe('CommandTarget', () => {
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
    assert.ok(Date.now() - started < 5_000);
    await delay(1_500);
    assert.equal(existsSync(join(ws, 'late.txt')), false);
  });

  it('kills background processes left behind after a normal exit', async () => {
    // The background subshell would sleep 30 s and then write; it records its pid first.
    const target = new CommandTarget(sh('(sleep 30; echo late > late.txt) & echo $! > bg.pid; echo quick'));
    const response = await target.send({ prompt: 'x', workspace: ws });
    assert.equal(response.reply, 'quick\n');
    const pid = Number(readFileSync(join(ws, 'bg.pid'), 'utf8'));
    assert.ok(pid > 0);
    // Gone long before its 30 s sleep could end on its own (polled, generous under load).
    for (let waited = 0; isAlive(pid) && waited < 20_000; waited += 50) await delay(50);
    assert.equal(isAlive(pid), false, 'the background process was killed');
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
});

/** True while a process with this pid runs (Linux: a zombie waiting to be reaped has already died). */
function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}
