import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CampaignSchema } from '../../src/attacks/campaign.js';
import { expandMatrix } from '../../src/attacks/library/matrix.js';

const attacker = { model: { baseUrl: 'http://127.0.0.1:8719/v1', name: 'witness-attacker' }, rounds: 3 };
const attack = { id: 'a', prompt: 'Summarize README.md.', expect: { uri: '/x' } };

const issuesOf = (input: unknown) => {
  const parsed = CampaignSchema.safeParse(input);
  return parsed.success
    ? []
    : parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
};

describe('attacker: (SPEC §15) is checked before the run', () => {
  const files = [
    { path: 'README.md', content: 'a' },
    { path: 'docs/b.md', content: 'b' },
  ];

  it('defaults plant to the only planted file, and refuses an ambiguous or unplanted one', () => {
    assert.deepEqual(
      issuesOf({
        name: 'c',
        target: { kind: 'mock', mode: 'picky' },
        workspace: { files: files.slice(0, 1) },
        attacks: [{ ...attack, attacker }],
      }),
      [],
    );
    assert.deepEqual(
      issuesOf({
        name: 'c',
        target: { kind: 'mock', mode: 'picky' },
        workspace: { files },
        attacks: [{ ...attack, attacker }],
      }),
      [
        'attacks.0.attacker.plant: more than one planted file (README.md, docs/b.md): name the one the attacker rewrites in attacker.plant',
      ],
    );
    assert.deepEqual(
      issuesOf({
        name: 'c',
        target: { kind: 'mock', mode: 'picky' },
        workspace: { files },
        attacks: [{ ...attack, attacker: { ...attacker, plant: '/docs/c.md' } }],
      }),
      [
        'attacks.0.attacker.plant: attacker.plant "/docs/c.md" is not a planted file (planted: README.md, docs/b.md); the attacker rewrites the text of a file the campaign plants',
      ],
    );
  });

  it('refuses more than 50 rounds, and an attacker on a control', () => {
    const base = {
      name: 'c',
      target: { kind: 'mock', mode: 'picky' },
      workspace: { files: files.slice(0, 1) },
    };
    assert.deepEqual(issuesOf({ ...base, attacks: [{ ...attack, attacker: { ...attacker, rounds: 51 } }] }), [
      'attacks.0.attacker.rounds: rounds is at most 50',
    ]);
    assert.deepEqual(issuesOf({ ...base, attacks: [{ ...attack, control: true, attacker }] }), [
      'attacks.0.attacker: a control is a benign prompt: it takes no attacker',
    ]);
  });

  it('a matrix attacker plants in each attack’s carrier file', () => {
    const attacks = expandMatrix({
      objectives: ['npmrc-registry'],
      carriers: ['readme', 'tool-output'],
      strategies: ['plain'],
      attacker,
    });
    assert.deepEqual(
      attacks.map((entry) => entry.attacker?.plant),
      ['README.md', 'build.log'],
    );
    assert.deepEqual(issuesOf({ name: 'm', target: { kind: 'mock', mode: 'picky' }, attacks }), []);
  });
});
