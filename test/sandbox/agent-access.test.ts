import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { agentAccessProblem } from '../../src/sandbox/agent-access.js';
import { agentUserOf, RunAsSchema } from '../../src/sandbox/agent-user.js';

/**
 * What the agent's own user can reach is decided from permission bits before the run (the heavy test
 * agent-user.heavy.test.ts runs it as root through `witness run`). Here on a real tree, for a user that
 * owns nothing in it: the check reads modes and owners, so it holds whoever runs the test.
 */

const NOBODY = { uid: 65534, gid: 65534 };

describe('agentAccessProblem', () => {
  let dir: string;
  before(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'witness-agent-access-')));
    chmodSync(dir, 0o755);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  function program(relative: string, mode: number, text = '#!/bin/sh\necho ran\n'): string {
    const path = join(dir, relative);
    writeFileSync(path, text);
    chmodSync(path, mode);
    return path;
  }

  it('passes a program others may read and execute, in directories others may search', () => {
    const agent = program('open.sh', 0o755);
    assert.equal(
      agentAccessProblem({ user: NOBODY, command: agent, searchPath: '/usr/bin:/bin' }),
      undefined,
    );
  });

  it('names a directory on the way the user cannot search, with its mode and the fix', () => {
    const closed = join(dir, 'closed');
    mkdirSync(closed, { mode: 0o700 });
    const agent = join(closed, 'agent.sh');
    writeFileSync(agent, '#!/bin/sh\n', { mode: 0o755 });
    const problem = agentAccessProblem({ user: NOBODY, command: agent, searchPath: '/usr/bin:/bin' });
    assert.match(
      problem ?? '',
      new RegExp(`uid 65534 .*cannot search ${closed} \\(mode 0700.*chmod o\\+x ${closed}`),
    );
  });

  it('names a script the user cannot read, and a binary it cannot execute', () => {
    const unreadable = program('unreadable.sh', 0o711);
    assert.match(
      agentAccessProblem({ user: NOBODY, command: unreadable, searchPath: '/bin' }) ?? '',
      /cannot read .*unreadable\.sh \(mode 0711.*chmod o\+r/,
    );
    const unrunnable = program('unrunnable', 0o744, 'binary');
    assert.match(
      agentAccessProblem({ user: NOBODY, command: unrunnable, searchPath: '/bin' }) ?? '',
      /cannot execute .*unrunnable \(mode 0744.*chmod o\+rx/,
    );
  });

  it('checks each script the configuration names', () => {
    const agent = program('runner.sh', 0o755);
    const secret = program('server.mjs', 0o600, 'export {};\n');
    assert.match(
      agentAccessProblem({ user: NOBODY, command: agent, searchPath: '/bin', programFiles: [secret] }) ?? '',
      /cannot read .*server\.mjs/,
    );
  });

  it('starts from the shown path under bubblewrap: its synthetic parents are open to all', () => {
    const closed = join(dir, 'closed-parent');
    mkdirSync(join(closed, 'pkg'), { recursive: true, mode: 0o700 });
    chmodSync(join(closed, 'pkg'), 0o755);
    const agent = join(closed, 'pkg', 'agent.sh');
    writeFileSync(agent, '#!/bin/sh\n', { mode: 0o755 });
    const shown = [join(closed, 'pkg')];
    assert.equal(agentAccessProblem({ user: NOBODY, command: agent, searchPath: '/bin', shown }), undefined);
    assert.match(
      agentAccessProblem({ user: NOBODY, command: agent, searchPath: '/bin' }) ?? '',
      /cannot search/,
    );
  });
});

describe('runAs', () => {
  it('is a uid or "uid:gid", never root', () => {
    assert.deepEqual(agentUserOf(RunAsSchema.parse(1001)), { uid: 1001, gid: 1001 });
    assert.deepEqual(agentUserOf(RunAsSchema.parse('1001:2002')), { uid: 1001, gid: 2002 });
    assert.deepEqual(agentUserOf(undefined), NOBODY);
    for (const bad of [0, '0:0', '1001:0', -1, 1.5, 'nobody', '1001:']) {
      assert.equal(RunAsSchema.safeParse(bad).success, false, String(bad));
    }
  });
});
