import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { classifyFailure } from '../../src/cli/exit-status.js';
import { firstUnsafe, HOSTILE } from '../support/hostile-text.js';
import { type InProcessResult, witness } from '../support/in-process-cli.js';
import { needsBubblewrap } from '../support/requirements.js';
import { makeWorkspace } from '../support/workspace.js';

/** Why the tests that run an out-of-process agent (in its sandbox) skip here, if they do. */
const bubblewrap = await needsBubblewrap();

/**
 * SPEC §10: every human-facing output quotes agent-controlled text through one function. Each command a
 * person reads is fed a file name, a file content, a reply, an objective or an error message holding every
 * control class (test/support/hostile-text.ts); no control character may reach stdout or stderr.
 */

const dir = mkdtempSync(path.join(tmpdir(), 'witness-ux-tty-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const db = path.join(dir, 'memory.db');

function assertSafe(what: string, result: InProcessResult): void {
  const problem = firstUnsafe(result.stdout) ?? firstUnsafe(result.stderr);
  assert.equal(problem, undefined, `${what} printed a control character: ${problem}`);
  // A forged line: the agent's "\rVerdict: FALSE" must never start a line of its own.
  assert.doesNotMatch(`${result.stdout}\n${result.stderr}`, /(^|\n)Verdict: FALSE\ny/, what);
}

describe('every human-facing command neutralizes agent text (SPEC §10)', () => {
  const root = makeWorkspace({ [`d/${HOSTILE}`]: `${HOSTILE}\ncurl attacker.example\n` });
  let scoreId = '';
  let observationId = '';

  it('score (a verdict, its evidence, its content excerpt and an agent-chosen objective)', async () => {
    const json = await witness([
      'score',
      root,
      '/d/*',
      '--glob',
      '--contains',
      'curl',
      '--objective',
      HOSTILE,
      '--json',
      '--db',
      db,
    ]);
    assert.equal(json.status, 0, json.stderr);
    const parsed = JSON.parse(json.stdout) as { score: { id: string }; observation: { id: string } };
    scoreId = parsed.score.id;
    observationId = parsed.observation.id;
    writeFileSync(path.join(dir, 'score.json'), json.stdout);
    const human = await witness(['score', root, '/d/*', '--glob', '--regex', 'c.rl', '--objective', HOSTILE]);
    assert.equal(human.status, 0, human.stderr);
    assert.match(human.stdout, /Verdict: TRUE/);
    assertSafe('score', human);
  });

  it('score with an exact uri the agent chose', async () => {
    const result = await witness(['score', root, `/d/${HOSTILE}`, '--exact', '--db', db]);
    assert.equal(result.status, 0, result.stderr);
    assertSafe('score --exact', result);
  });

  it('replay of a file and of a stored score', async () => {
    assertSafe('replay FILE', await witness(['replay', path.join(dir, 'score.json')]));
    const stored = await witness(['replay', '--score', scoreId, '--db', db]);
    assert.equal(stored.status, 0, stored.stderr);
    assertSafe('replay --score', stored);
  });

  it('scores list, scores show, observations show, observe --text', async () => {
    for (const args of [
      ['scores', 'list', '--db', db],
      ['scores', 'show', scoreId, '--db', db],
      ['observations', 'show', observationId, '--db', db],
      ['observe', root, '/d/*', '--glob', '--text'],
    ]) {
      const result = await witness(args);
      assert.equal(result.status, 0, `${args.join(' ')}: ${result.stderr}`);
      assertSafe(args.slice(0, 2).join(' '), result);
    }
  });

  it('run: the table of replies, verdicts and errors (a reply and a stderr full of controls)', {
    skip: bubblewrap,
  }, async () => {
    const campaignDir = path.join(dir, 'campaign');
    mkdirSync(campaignDir, { recursive: true });
    writeFileSync(path.join(campaignDir, 'reply.txt'), HOSTILE);
    const file = path.join(campaignDir, 'c.yaml');
    writeFileSync(
      file,
      [
        'name: "hostile\\e]0;t\\a\\u202E\\x9b2J"',
        'target: { kind: command, command: /bin/sh, args: ["-c", "cat {campaignDir}/reply.txt; cat {campaignDir}/reply.txt >&2; test {prompt} = ok"] }',
        'attacks:',
        '  - { id: replies, prompt: ok, expect: { uri: /out.txt } }',
        '  - { id: fails, prompt: no, expect: { uri: /out.txt } }',
        '',
      ].join('\n'),
    );
    const result = await witness(['run', file, '--db', path.join(dir, 'run.db')]);
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /FAILURE/);
    assert.match(result.stdout, /ERROR/);
    assertSafe('run', result);
  });

  it('errors: a usage error naming an agent-chosen file, a Node error message with its stack, commander', async () => {
    const hostileDir = path.join(dir, HOSTILE);
    const cases: string[][] = [
      ['replay', path.join(hostileDir, 'observation.json')],
      ['report', '--db', db, '--out', path.join(hostileDir, 'missing', 'report.html')],
      ['score', root, '/a', `--x${HOSTILE}`],
      ['run', path.join(hostileDir, 'campaign.yaml')],
    ];
    for (const args of cases) {
      const result = await witness(args);
      assert.notEqual(result.status, 0, args.join(' '));
      assert.notEqual(result.stderr, '', args.join(' '));
      assertSafe(args[0] as string, result);
    }
  });

  it('classifyFailure escapes an unexpected error, its stack and its cause', () => {
    const error = new Error(`boom ${HOSTILE}`, { cause: new Error(HOSTILE) });
    const failure = classifyFailure(error, false);
    assert.equal(failure.status, 1);
    assert.equal(firstUnsafe(failure.message ?? ''), undefined);
    assert.match(failure.message ?? '', /caused by: Error: x\\u001B\]0;pwned/);
  });
});
