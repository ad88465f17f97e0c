import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

/**
 * `npm install` in a fresh clone must leave it as cloned. npm rewrites the lock's root entry from
 * package.json, so a field changed in one and not the other (the `bin` once said dist/src/cli/main.js in
 * the lock, dist/cli/main.js in package.json) makes every install change a tracked file. And every
 * dependency with an install script is decided in `allowScripts` (run it, or not), so npm has nothing
 * to warn about and the decision is on record (docs/decisions.md says why each).
 */

interface LockPackage {
  name?: string;
  version?: string;
  hasInstallScript?: boolean;
  [field: string]: unknown;
}

const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as Record<string, unknown>;
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as {
  name: string;
  version: string;
  packages: Record<string, LockPackage>;
};

describe('package-lock.json', () => {
  it("holds package.json's own fields as npm would write them", () => {
    const root = lock.packages[''];
    assert.ok(root !== undefined, 'the lock has a root package');
    assert.equal(lock.name, manifest.name);
    assert.equal(lock.version, manifest.version);
    // The fields npm copies into the root entry (those package.json has).
    for (const field of [
      'name',
      'version',
      'license',
      'bin',
      'engines',
      'dependencies',
      'devDependencies',
      'optionalDependencies',
      'peerDependencies',
    ]) {
      assert.deepEqual(root[field], manifest[field], `the lock's root "${field}" differs from package.json`);
    }
  });

  it('has every dependency with an install script decided in allowScripts', () => {
    const allowScripts = (manifest.allowScripts ?? {}) as Record<string, unknown>;
    const decided = new Set(Object.keys(allowScripts).map((key) => key.replace(/(.)@.*$/, '$1')));
    const withScripts = Object.entries(lock.packages)
      .filter(([key, entry]) => key !== '' && entry.hasInstallScript === true)
      .map(
        ([key, entry]) => entry.name ?? key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length),
      );
    assert.ok(withScripts.includes('better-sqlite3'), 'the lock marks install scripts (hasInstallScript)');
    assert.deepEqual(
      withScripts.filter((name) => !decided.has(name)),
      [],
      'add each to allowScripts (true or false) and say why in docs/decisions.md',
    );
    for (const [key, value] of Object.entries(allowScripts)) {
      assert.equal(typeof value, 'boolean', `allowScripts["${key}"]`);
    }
  });
});
