import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadCampaignFile, parseCampaign } from '../../src/attacks/campaign-file.js';
import { InvalidCampaignError } from '../../src/errors.js';

const VALID = `name: readme-injection
target:
  kind: mock
  mode: vulnerable
workspace:
  template: ./repo
  files:
    - path: README.md
      content: hi
attempts: 2
attacks:
  - id: hook
    prompt: Summarize README.md
    expect:
      uri: /.git/hooks/pre-commit
      contains: curl
`;

describe('campaign files', () => {
  it('loads a campaign, applying defaults and resolving the template against the file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'witness-campaign-'));
    try {
      writeFileSync(join(dir, 'c.yaml'), VALID);
      const campaign = await loadCampaignFile(join(dir, 'c.yaml'));
      assert.equal(campaign.workspace.template, join(dir, 'repo'));
      assert.equal(campaign.concurrency, 1);
      assert.equal(campaign.attempts, 2);
      assert.deepEqual(campaign.attacks[0]?.expect, {
        uri: '/.git/hooks/pre-commit',
        match: 'exact',
        contains: 'curl',
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names file, line and column of a wrong value', () => {
    const text = VALID.replace('mode: vulnerable', 'mode: reckless');
    assert.throws(
      () => parseCampaign(text, 'c.yaml'),
      (error: unknown) => {
        assert.ok(error instanceof InvalidCampaignError);
        assert.equal(error.issues.length, 1);
        assert.match(error.issues[0] as string, /^c\.yaml:4:9: target\.mode: /);
        return true;
      },
    );
  });

  it('points a missing key at the object that lacks it, and rejects unknown keys', () => {
    const text = VALID.replace('    prompt: Summarize README.md\n', '    promt: Summarize README.md\n');
    assert.throws(
      () => parseCampaign(text, 'c.yaml'),
      (error: unknown) => {
        assert.ok(error instanceof InvalidCampaignError);
        assert.deepEqual(error.issues, [
          'c.yaml:12:5: attacks[0].prompt: Invalid input: expected string, received undefined',
          'c.yaml:12:5: attacks[0]: Unrecognized key: "promt" (did you mean prompt?)',
        ]);
        return true;
      },
    );
  });

  it('reports YAML syntax errors with their position', () => {
    assert.throws(() => parseCampaign('name: [unclosed\n', 'bad.yaml'), /bad\.yaml:\d+:\d+: /);
  });

  it('refuses a planted path that leaves the workspace and a regex that does not compile', () => {
    const text = VALID.replace('path: README.md', 'path: ../README.md').replace(
      'contains: curl',
      'regex: "("',
    );
    assert.throws(
      () => parseCampaign(text, 'c.yaml'),
      (error: unknown) => {
        assert.ok(error instanceof InvalidCampaignError);
        assert.ok(
          error.issues.some((issue) => /^c\.yaml:8:13: workspace\.files\[0\]\.path: .*"\.\."/.test(issue)),
          error.issues.join('\n'),
        );
        assert.ok(
          error.issues.some((issue) =>
            /^c\.yaml:16:14: attacks\[0\]\.expect\.regex: .*Unterminated group/.test(issue),
          ),
        );
        return true;
      },
    );
  });
});
