import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import {
  BUNDLED_CLI,
  CLI,
  commandChunks,
  HEAVY,
  importing,
  loadedPackages,
  PACKAGE_ROOT,
} from './loaded-packages.js';

/**
 * Start-up: `import 'witness'` loads models, sources, scorers and verdicts but no database
 * driver and no MCP SDK; those come with `witness/memory`, `witness/attacks` and `witness/targets`. And
 * `witness --version` loads no command at all. Each check runs in a fresh child process with a
 * resolution hook that records every module URL the import really resolved. The subpaths, `witness score`
 * unbundled and bundled (several processes each) are checked in entry-points.heavy.test.ts.
 */

describe('package entry points', () => {
  it("import 'witness' loads no database driver, no MCP SDK and no FFI", () => {
    const { packages } = importing('witness', [
      'LocalFileSurfaceSource',
      'FileWriteScorer',
      'judgeContentWritten',
      'contentWritten',
      'contains',
      'surface',
      'ObservationSchema',
      'WitnessError',
    ]);
    for (const heavy of HEAVY) assert.ok(!packages.has(heavy), `import 'witness' loaded ${heavy}`);
    assert.ok(packages.has('zod'), 'the recorder saw the schemas load (it records what it should)');
  });

  it('every subpath in package.json names a built file', () => {
    const manifest = JSON.parse(fs.readFileSync(`${PACKAGE_ROOT}package.json`, 'utf8')) as {
      exports: Record<string, string | { types: string; default: string }>;
    };
    assert.deepEqual(Object.keys(manifest.exports).sort(), [
      '.',
      './attacks',
      './memory',
      './package.json',
      './targets',
    ]);
    for (const target of Object.values(manifest.exports)) {
      const files = typeof target === 'string' ? [target] : [target.default];
      for (const file of files) assert.ok(fs.existsSync(`${PACKAGE_ROOT}${file}`), file);
    }
  });

  it('witness --version prints the version without loading any command or schema', () => {
    const { packages, stdout, urls } = loadedPackages([CLI, '--version']);
    assert.equal(stdout, '0.1.0\n');
    assert.deepEqual([...packages], []);
    assert.ok(
      urls.every((url) => !url.includes('/cli/commands/')),
      urls.join('\n'),
    );
  });

  it('the bundled CLI is built from the current sources (else: node dist/scripts/bundle-cli.js)', () => {
    // `npm test` bundles after `tsc -b`; a bare `tsc -b` does not, and the checks below would then judge
    // a stale bundle.
    const bundledAt = fs.statSync(BUNDLED_CLI).mtimeMs;
    const stale = fs
      .readdirSync(`${PACKAGE_ROOT}dist/src`, { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.js'))
      .filter((file) => fs.statSync(`${PACKAGE_ROOT}dist/src/${file}`).mtimeMs > bundledAt);
    assert.deepEqual(stale, [], 'dist/cli is older than these; run node dist/scripts/bundle-cli.js');
  });

  it("the package's bin is the bundled CLI", () => {
    const manifest = JSON.parse(fs.readFileSync(`${PACKAGE_ROOT}package.json`, 'utf8')) as {
      bin: Record<string, string>;
      files: string[];
    };
    assert.deepEqual(manifest.bin, { witness: 'dist/cli/main.js' });
    assert.ok(manifest.files.includes('dist/cli'));
    assert.equal(fs.realpathSync(`${PACKAGE_ROOT}${manifest.bin.witness}`), fs.realpathSync(BUNDLED_CLI));
  });

  it('the bundled witness --version loads no package and no command chunk', () => {
    const { packages, stdout, urls } = loadedPackages([BUNDLED_CLI, '--version']);
    assert.equal(stdout, '0.1.0\n');
    assert.deepEqual([...packages], []);
    assert.deepEqual(commandChunks(urls), []);
  });
});
