import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { LIMIT_NAMES, LIMIT_SPECS, limitFlag } from '../src/models/evidence-limits.js';

/** The documents a new user reads agree with the code (tests run from the repository root). */

describe('README and docs/contract.md', () => {
  const readme = readFileSync('README.md', 'utf8');
  const contract = readFileSync('docs/contract.md', 'utf8');
  const packageJson = JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } };

  it('the README cites no file outside the repository (SPEC.md) and links the contract', () => {
    assert.doesNotMatch(readme, /SPEC\.md/);
    assert.match(readme, /docs\/contract\.md/);
  });

  it('the README states the Node versions package.json supports, and what compiling better-sqlite3 needs', () => {
    // engines: `^20.11.0 || ^24.0.0`, the two lines CI tests; the README names each.
    assert.equal(packageJson.engines.node, '^20.11.0 || ^24.0.0');
    assert.match(readme, /Node\.js 20 \(20\.11 or later\) or 24/);
    assert.match(readme, /better-sqlite3/);
    assert.match(readme, /`python3`, `make` and `g\+\+`/);
  });

  it('the limits table matches the one schema: flag, default and maximum', () => {
    for (const name of LIMIT_NAMES) {
      const { defaultValue, maximum, bounds } = LIMIT_SPECS[name];
      assert.match(
        contract,
        new RegExp(
          `\\| \`${name}\` \\| \`evidence\\.${name}\` \\| \`${limitFlag(name)}\` \\| ${bounds} \\| ${defaultValue} \\| ${maximum} \\|`,
        ),
        name,
      );
    }
  });
});
