import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { describe, it } from 'node:test';
import { SINGLE_COMMANDS } from '../../src/cli/command-modules.js';
import {
  BUNDLED_CLI,
  bundledModules,
  bundleFiles,
  CLI,
  commandChunks,
  HEAVY,
  importing,
  loadedPackages,
} from './loaded-packages.js';

/**
 * Start-up, the checks that start several processes each: what the subpaths carry, and that `witness
 * score` (unbundled, and as the bundled one-file command) loads only what scoring needs. `npm test` keeps
 * `import 'witness'` and both `--version`s (entry-points.test.ts).
 */

describe('package entry points (several processes each)', () => {
  it('witness/memory, witness/attacks and witness/targets carry what moved out of the root', () => {
    const memory = importing('witness/memory', ['openMemory', 'MEMORY_SCHEMA_VERSION', 'parseArchiveLines']);
    assert.ok(memory.packages.has('kysely'), 'the recorder sees a driver when one is loaded');
    const attacks = importing('witness/attacks', ['runCampaign', 'parseCampaign', 'CampaignSchema']);
    assert.ok(attacks.urls.some((url) => url.endsWith('/src/attacks/run-campaign.js')));
    importing('witness/targets', ['MockAgentTarget', 'McpTarget', 'createTarget', 'TargetConfigSchema']);
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
