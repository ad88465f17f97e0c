import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { SINGLE_COMMANDS } from '../../src/cli/command-modules.js';

/**
 * Start-up: `import 'witness'` loads models, sources, scorers and verdicts but no database
 * driver and no MCP SDK; those come with `witness/memory`, `witness/attacks` and `witness/targets`. And
 * `witness --version` loads no command at all. Each check runs in a fresh child process with a
 * resolution hook that records every module URL the import really resolved.
 */

const PACKAGE_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const RECORDER = new URL('./load-recorder.js', import.meta.url).href;
const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
/** The bundled CLI (scripts/bundle-cli.ts), which is what the package's `bin` runs. */
const BUNDLED_CLI = fileURLToPath(new URL('../../cli/main.js', import.meta.url));

const HEAVY = ['better-sqlite3', 'pg', 'pg-boss', 'kysely', '@modelcontextprotocol/sdk', 'koffi'] as const;

// ES imports through the resolution hook; \`require\` (commander's built-ins, the score file's drivers, which
// scripts/bundle-cli.ts takes with \`require\` where \`--db\` uses them) through the CommonJS loader.
const REGISTER = `
import Module, { register } from 'node:module';
import { pathToFileURL } from 'node:url';
import { MessageChannel } from 'node:worker_threads';
const { port1, port2 } = new MessageChannel();
const loaded = new Set();
port1.on('message', (url) => loaded.add(url));
port1.unref();
register(${JSON.stringify(RECORDER)}, { data: { port: port2 }, transferList: [port2] });
const load = Module._load;
Module._load = function (request, parent, isMain) {
  const resolved = Module._resolveFilename(request, parent, isMain);
  loaded.add(resolved.startsWith('/') ? pathToFileURL(resolved).href : resolved);
  return load.apply(this, arguments);
};
process.on('exit', () => process.stderr.write('\\nLOADED ' + JSON.stringify([...loaded]) + '\\n'));
`;

/** Packages (by name) whose modules were resolved while running `args` with the recorder. */
function loadedPackages(
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): { packages: Set<string>; stdout: string; urls: string[] } {
  const setup = `data:text/javascript,${encodeURIComponent(REGISTER)}`;
  const result = spawnSync(process.execPath, ['--import', setup, ...args], {
    cwd: PACKAGE_ROOT,
    encoding: 'utf8',
    env,
  });
  assert.equal(result.status, 0, result.stderr);
  const line = result.stderr.split('\n').find((text) => text.startsWith('LOADED '));
  assert.ok(line, `no module list in: ${result.stderr}`);
  const urls = JSON.parse(line.slice('LOADED '.length)) as string[];
  const packages = new Set<string>();
  for (const url of urls) {
    const match = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
    if (match?.[1] !== undefined) packages.add(match[1]);
  }
  return { packages, stdout: result.stdout, urls };
}

function importing(specifier: string, names: readonly string[]) {
  const script = `const m = await import(${JSON.stringify(specifier)});
const missing = ${JSON.stringify(names)}.filter((name) => !(name in m));
if (missing.length > 0) throw new Error('missing exports: ' + missing.join(', '));`;
  return loadedPackages(['--input-type=module', '-e', script]);
}

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

  it('witness/memory, witness/attacks and witness/targets carry what moved out of the root', () => {
    const memory = importing('witness/memory', ['openMemory', 'MEMORY_SCHEMA_VERSION', 'parseArchiveLines']);
    assert.ok(memory.packages.has('kysely'), 'the recorder sees a driver when one is loaded');
    const attacks = importing('witness/attacks', ['runCampaign', 'parseCampaign', 'CampaignSchema']);
    assert.ok(attacks.urls.some((url) => url.endsWith('/src/attacks/run-campaign.js')));
    importing('witness/targets', ['MockAgentTarget', 'McpTarget', 'createTarget', 'TargetConfigSchema']);
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

  it('witness score loads the score command only: no other command, runner, target or database driver', () => {
    const root = fs.mkdtempSync(`${os.tmpdir()}/witness-score-start-`);
    try {
      fs.writeFileSync(`${root}/a.txt`, 'hello file');
      const { packages, stdout, urls } = loadedPackages([CLI, 'score', root, '/a.txt', '--contains', 'file']);
      assert.match(stdout, /^Verdict: TRUE/);
      const commands = urls.filter((url) => url.includes('/cli/commands/'));
      assert.deepEqual(
        commands.map((url) => url.replace(/^.*\/cli\/commands\//, '')),
        ['score.js'],
      );
      for (const heavy of HEAVY.filter((name) => name !== 'koffi')) {
        assert.ok(!packages.has(heavy), `witness score loaded ${heavy}`);
      }
      for (const module of [
        '/attacks/run-campaign.js',
        '/targets/',
        '/model-server/',
        '/memory/',
        '/models/manifest.js',
        '/models/evidence-limits-schema.js',
      ]) {
        assert.ok(!urls.some((url) => url.includes(module)), `witness score loaded ${module}`);
      }
      // The whole tree is still what `witness --help` gets.
      const help = loadedPackages([CLI, '--help']);
      assert.match(help.stdout, /score/);
      assert.ok(help.urls.filter((url) => url.includes('/cli/commands/')).length > 5);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
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

  it("the bundled witness score loads its own file only, and none of zod's files from node_modules", () => {
    const root = fs.mkdtempSync(`${os.tmpdir()}/witness-bundled-score-`);
    try {
      fs.writeFileSync(`${root}/a.txt`, 'hello file');
      const { packages, stdout, urls } = loadedPackages([
        BUNDLED_CLI,
        'score',
        root,
        '/a.txt',
        '--contains',
        'file',
      ]);
      // The verdict needs the acquisition worker: the bundle found dist/cli/acquire-worker.cjs.
      assert.match(stdout, /^Verdict: TRUE/);
      // One file for the command (scripts/bundle-cli.ts), no chunk of the split command tree.
      assert.deepEqual(commandChunks(urls), []);
      const files = bundleFiles(urls);
      assert.ok(files.includes('score-process.js'), files.join(', '));
      assert.ok(!files.includes('run-witness.js') && !files.some((file) => file.startsWith('run-witness-')));
      assert.equal(files.filter((file) => file.startsWith('chunk-')).length <= 4, true, files.join(', '));
      // What the loaded files hold: esbuild marks each source module's code with a `// src/….ts` line.
      // The score file also holds, behind `import()`, the memory (`--db`) and the manifest's checks: code
      // that runs only there. That it did not run here is shown by the drivers below, which the memory's
      // modules require when they run (the control with --db, further down, sees them).
      const modules = bundledModules(urls);
      assert.ok(modules.includes('src/cli/commands/score.ts'), 'the recorder sees the bundled modules');
      assert.deepEqual(
        modules.filter((module) => module.startsWith('src/cli/commands/')),
        ['src/cli/commands/score.ts'],
      );
      for (const module of [
        'src/attacks/',
        'src/targets/',
        'src/model-server/',
        'src/queue/',
        'src/models/evidence-limits-schema.ts',
      ]) {
        assert.ok(
          !modules.some((loaded) => loaded.startsWith(module)),
          `the bundled witness score loaded ${module}`,
        );
      }
      // zod and commander are compiled in (zod tree-shaken: no locale but English); the rest stay packages.
      assert.ok(!packages.has('zod'), 'the bundled CLI resolved zod from node_modules');
      assert.ok(!packages.has('commander'), 'the bundled CLI resolved commander from node_modules');
      for (const heavy of HEAVY.filter((name) => name !== 'koffi')) {
        assert.ok(!packages.has(heavy), `the bundled witness score loaded ${heavy}`);
      }
      // Control: with --db the same file requires the memory's drivers, and the recorder sees them.
      const stored = loadedPackages([
        BUNDLED_CLI,
        'score',
        root,
        '/a.txt',
        '--contains',
        'file',
        '--db',
        `${root}/witness.db`,
      ]);
      assert.match(stored.stdout, /^Verdict: TRUE/);
      assert.ok(stored.packages.has('better-sqlite3'), [...stored.packages].join(', '));
      assert.ok(stored.packages.has('kysely'), [...stored.packages].join(', '));
      assert.deepEqual(commandChunks(stored.urls), []);
      // zod's messages are still English (its default locale survived tree shaking), word for word
      // what the unbundled CLI prints.
      fs.writeFileSync(`${root}/bad.json`, '{"id":5}');
      const replays = [BUNDLED_CLI, CLI].map((cli) =>
        spawnSync(process.execPath, [cli, 'replay', `${root}/bad.json`], { encoding: 'utf8' }),
      );
      assert.equal(replays[0]?.status, 2);
      assert.match(replays[0]?.stderr ?? '', /id: Invalid input: expected string, received number/);
      assert.equal(replays[0]?.stderr, replays[1]?.stderr);
      const help = loadedPackages([BUNDLED_CLI, '--help']);
      for (const name of SINGLE_COMMANDS) assert.match(help.stdout, new RegExp(`^  ${name} `, 'm'), name);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});

/** The command chunks of the bundled CLI (`dist/cli/<command>-<HASH>.js`) among the resolved URLs, by command. */
function commandChunks(urls: readonly string[]): string[] {
  const found: string[] = [];
  for (const url of urls) {
    const match = /\/dist\/cli\/([a-z]+)-[A-Z0-9]{8}\.js$/.exec(url);
    if (match?.[1] !== undefined && SINGLE_COMMANDS.includes(match[1])) found.push(match[1]);
  }
  return found.sort();
}

/** The bundle's files (names in dist/cli) among the resolved URLs. */
function bundleFiles(urls: readonly string[]): string[] {
  const files = new Set<string>();
  for (const url of urls) {
    const match = /\/dist\/cli\/([^/]+\.js)$/.exec(url);
    if (match?.[1] !== undefined) files.add(match[1]);
  }
  return [...files].sort();
}

/** The source modules whose code the bundled CLI's loaded files hold (esbuild's `// src/….ts` markers). */
function bundledModules(urls: readonly string[]): string[] {
  const modules = new Set<string>();
  for (const url of urls) {
    if (!/\/dist\/cli\/[^/]+\.js$/.test(url)) continue;
    for (const match of fs.readFileSync(new URL(url), 'utf8').matchAll(/^\/\/ (src\/\S+\.ts)$/gm)) {
      modules.add(match[1] as string);
    }
  }
  return [...modules].sort();
}
