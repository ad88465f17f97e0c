import assert from 'node:assert/strict';
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createRunDirectory } from '../../src/attacks/workspace.js';
import { runCli } from '../support/cli.js';
import { needsBubblewrap } from '../support/requirements.js';

/** Containment through the built `witness` CLI, as a user runs it. */

const bubblewrap = await needsBubblewrap();
const CANARY = 'sk-canary-9f8e7d6c5b4a39281706';

describe('witness run (containment, end to end)', () => {
  let dir: string;
  before(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'witness-cli-contain-')));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const campaign = (extra: string) => {
    const file = join(dir, `campaign-${Math.random().toString(36).slice(2)}.yaml`);
    writeFileSync(
      file,
      `name: canary
target:
  kind: command
  command: /bin/sh
  args: ['-c', 'env > env.txt; echo "$OPENAI_API_KEY" > key.txt; echo "reply $OPENAI_API_KEY"; echo "err $OPENAI_API_KEY" >&2']
${extra}
attacks:
  - id: leak
    prompt: x
    expect: { uri: /key.txt, contains: sk- }
`,
    );
    return file;
  };

  it('refuses a command target without bubblewrap (exit 2, naming the fix), unless sandbox: none', async () => {
    const env = { ...process.env, PATH: '/nonexistent', TMPDIR: dir };
    const refused = await runCli(['run', campaign(''), '--db', join(dir, 'refused.db')], { env });
    assert.equal(refused.status, 2, refused.stderr);
    assert.match(refused.stderr, /Install bubblewrap/);
    assert.match(refused.stderr, /sandbox: none/);
    assert.equal(refused.stdout, '');
  });

  it('keeps a named secret out of the database, its WAL, the report and stdout', {
    skip: bubblewrap,
  }, async () => {
    const db = join(dir, 'canary.db');
    const report = join(dir, 'report.html');
    const env = { ...process.env, OPENAI_API_KEY: CANARY, TMPDIR: dir };
    const result = await runCli(
      [
        'run',
        campaign('passEnv: [OPENAI_API_KEY]\nsecrets: [OPENAI_API_KEY]'),
        '--db',
        db,
        '--report',
        report,
        '--json',
      ],
      { env },
    );
    assert.equal(result.status, 0, result.stderr);
    const attempt = JSON.parse(result.stdout).attempts[0];
    assert.equal(attempt.outcome, 'success');
    assert.equal(attempt.containment, 'bwrap');
    assert.match(attempt.reply, /reply \[redacted:OPENAI_API_KEY\]/);
    const stored = [db, `${db}-wal`, report].filter((file) => existsSync(file));
    assert.ok(stored.length >= 2);
    for (const file of stored) {
      assert.equal(readFileSync(file).includes(CANARY), false, `${file} holds the secret`);
      assert.equal(readFileSync(file).includes(CANARY.slice(0, 12)), false, `${file} holds a prefix`);
    }
    assert.equal(result.stdout.includes(CANARY), false);
    assert.equal(result.stderr.includes(CANARY), false);
    const table = await runCli(
      ['run', campaign('passEnv: [OPENAI_API_KEY]\nsecrets: [OPENAI_API_KEY]'), '--db', db],
      {
        env,
      },
    );
    assert.equal(table.stdout.includes(CANARY), false);
    assert.match(table.stdout, /sandbox/);
    assert.match(table.stdout, /\bbwrap\b/);
  });

  it('witness clean removes the run directory of a killed run', async () => {
    const killed = await createRunDirectory(dir, 2 ** 22 + 12345);
    writeFileSync(join(killed.path, 'left.txt'), 'x');
    killed.release();
    const result = await runCli(['clean', '--dir', dir]);
    assert.equal(result.status, 0, result.stderr);
    assert.equal(result.stdout, `removed ${killed.path}\n`);
    assert.equal(
      readdirSync(dir).some((name) => name.startsWith('witness-run-')),
      false,
    );
  });
});
