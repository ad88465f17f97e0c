import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import {
  checkRelativeImports,
  checkRelativeUrls,
  checkScoreFileImports,
  modulesInBoth,
  POOL_FILE,
  pointPoolAtWorkerFile,
  SCORE_FILE,
  WORKER_FILE,
} from '../../scripts/bundle-cli.js';
import { openat2Unavailable } from '../../src/sources/confined-fs/surface-fs-choice.js';
import type { AcquireJob, AcquireReply } from '../../src/sources/local-file/acquire-worker.js';
import { DEFAULT_LIMITS } from '../../src/sources/local-file/limits.js';
import { unpackSurfaceEntries } from '../../src/sources/local-file/surface-entry-unpacking.js';

/**
 * The bundle's build-time guards: the pool finds its worker as `new URL('./acquire-worker.js',
 * import.meta.url)`, which the bundle points at its one-file CommonJS worker; a bundle whose chunks name
 * a file it did not emit would ship a CLI that fails at its first acquisition, so the build refuses it.
 */
describe('bundle-cli', () => {
  function bundleDir(files: Record<string, string>): string {
    const dir = fs.mkdtempSync(`${os.tmpdir()}/witness-bundle-`);
    for (const [name, text] of Object.entries(files)) fs.writeFileSync(`${dir}/${name}`, text);
    return dir;
  }

  it('refuses a chunk that refers to a file the bundle does not contain', () => {
    const dir = bundleDir({
      'chunk-ABCDEFGH.js': 'const worker = new Worker(new URL("./acquire-worker.js", import.meta.url));\n',
    });
    try {
      assert.throws(() => checkRelativeUrls(dir), /chunk-ABCDEFGH\.js refers to \.\/acquire-worker\.js/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('accepts it when the file is there', () => {
    const dir = bundleDir({
      'chunk-ABCDEFGH.js': "const worker = new Worker(new URL('./acquire-worker.cjs', import.meta.url));\n",
      'acquire-worker.cjs': '',
    });
    try {
      assert.doesNotThrow(() => checkRelativeUrls(dir));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses an import of a file the bundle does not contain, static or dynamic', () => {
    const cases = {
      'main.js': 'const m = await import("./score-process.js");\n',
      'score-process.js': 'import { acquisitionPool } from "./acquisition-pool.js";\n',
      'chunk-ABCDEFGH.js': 'import "./chunk-IJKLMNOP.js";\n',
    };
    for (const [file, text] of Object.entries(cases)) {
      const dir = bundleDir({ [file]: text });
      try {
        assert.throws(() => checkRelativeImports(dir), new RegExp(`dist/cli/${file} imports \\./`));
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }
    const whole = bundleDir({ ...cases, 'acquisition-pool.js': '', 'chunk-IJKLMNOP.js': '' });
    try {
      assert.doesNotThrow(() => checkRelativeImports(whole));
    } finally {
      fs.rmSync(whole, { recursive: true, force: true });
    }
  });

  it('refuses a score file that imports a package at its top (it would load on every witness score)', () => {
    const top = [
      "import { createRequire as __witnessCreateRequire } from 'node:module';",
      'import { createHash } from "node:crypto";',
      'import os from "node:os";',
      `import { acquisitionPool } from "./${POOL_FILE}";`,
    ].join('\n');
    assert.doesNotThrow(() => checkScoreFileImports(`${top}\nvar x = 1;\n`));
    // The memory's drivers, hoisted out of the code behind `--db`, in each spelling esbuild writes.
    for (const hoisted of [
      'import pg from "pg";',
      'import {\n  Kysely,\n  sql\n} from "kysely";',
      'import "pg-boss";',
    ]) {
      assert.throws(
        () => checkScoreFileImports(`${top}\n${hoisted}\nvar x = 1;\n`),
        new RegExp(`dist/cli/${SCORE_FILE.replace('.', '\\.')} imports (pg|kysely|pg-boss) at its top`),
      );
    }
    // A dynamic import is not at the top: it loads when the code that reaches it runs.
    assert.doesNotThrow(() => checkScoreFileImports(`${top}\nasync function f() { await import("pg"); }\n`));
  });

  it("names the modules the score file would hold twice (a second copy of the pool's graph)", () => {
    const poolGraph = new Set([
      'src/sources/local-file/acquisition-pool.ts',
      'src/sources/local-file/read-lanes.ts',
    ]);
    assert.deepEqual(modulesInBoth(['src/cli/score-process.ts', 'src/models/scorable.ts'], poolGraph), []);
    assert.deepEqual(
      modulesInBoth(['src/cli/score-process.ts', 'src/sources/local-file/read-lanes.ts'], poolGraph),
      ['src/sources/local-file/read-lanes.ts'],
    );
  });

  it('the built score file imports the pool by name and no package at its top', () => {
    const cliDir = fileURLToPath(new URL('../../cli/', import.meta.url));
    const text = fs.readFileSync(`${cliDir}${SCORE_FILE}`, 'utf8');
    assert.doesNotThrow(() => checkScoreFileImports(text));
    assert.match(
      text,
      new RegExp(`^import \\{ acquisitionPool \\} from "\\./${POOL_FILE.replace('.', '\\.')}";$`, 'm'),
    );
    assert.ok(fs.existsSync(`${cliDir}${POOL_FILE}`));
    assert.match(
      fs.readFileSync(`${cliDir}main.js`, 'utf8'),
      new RegExp(`import\\("\\./${SCORE_FILE.replace('.', '\\.')}"\\)`),
    );
    // The memory's drivers are in the file, taken with `require` when `--db` first runs that code.
    assert.match(text, /module\.exports = __require\("better-sqlite3"\)/);
  });

  it('the built worker holds no schema library: a pool thread packs entries, the caller checks them', () => {
    // zod and the entry rule in every pool thread cost ≈ 50 ms and 1.2 MiB of heap at its start.
    const cliDir = fileURLToPath(new URL('../../cli/', import.meta.url));
    const map = JSON.parse(fs.readFileSync(`${cliDir}acquire-worker.cjs.map`, 'utf8')) as {
      sources: string[];
    };
    assert.ok(map.sources.some((source) => source.endsWith('src/sources/local-file/packed-entries.ts')));
    const heavy = map.sources.filter(
      (source) => source.includes('/zod/') || /models\/(checked-observation|observation)\.ts$/.test(source),
    );
    assert.deepEqual(heavy, []);
  });

  it("points the pool's worker URL at the bundle's worker file, and refuses a pool it cannot point", () => {
    const pool = "const a = 1;\nnew Worker(new URL('./acquire-worker.js', import.meta.url), {});\n";
    assert.equal(
      pointPoolAtWorkerFile(pool),
      "const a = 1;\nnew Worker(new URL('./acquire-worker.cjs', import.meta.url), {});\n",
    );
    // Moved, renamed or spelt differently: the build stops instead of shipping a worker nobody starts.
    assert.throws(
      () => pointPoolAtWorkerFile('new Worker(new URL("./acquire-worker.js", import.meta.url))'),
      /expected new URL\('\.\/acquire-worker\.js', import\.meta\.url\) exactly once \(found 0\)/,
    );
    assert.throws(() => pointPoolAtWorkerFile(pool + pool), /exactly once \(found 2\)/);
  });

  it("the built CLI's pool starts the CommonJS worker, which acquires through the openat2 seam", async (t) => {
    const cliDir = fileURLToPath(new URL('../../cli/', import.meta.url));
    const chunks = fs.readdirSync(cliDir).filter((name) => name.endsWith('.js'));
    const naming = chunks.filter((name) =>
      fs.readFileSync(`${cliDir}${name}`, 'utf8').includes(`new URL("./${WORKER_FILE}", import.meta.url)`),
    );
    assert.equal(naming.length, 1, `chunks naming ./${WORKER_FILE}: ${naming.join(', ')}`);
    assert.ok(!chunks.includes('acquire-worker.js'), 'the ES-module worker is no longer emitted');
    // The sources are ES modules (strict); the CommonJS file must be strict from its first statement.
    assert.match(fs.readFileSync(`${cliDir}${WORKER_FILE}`, 'utf8'), /^'use strict';/);
    // koffi is found from the bundle's file (its `import.meta.url` is the .cjs file's own URL).
    const unavailable = openat2Unavailable();
    if (unavailable !== undefined) {
      t.skip(`openat2 is unavailable here: ${unavailable}`);
      return;
    }
    const root = fs.mkdtempSync(`${os.tmpdir()}/witness-bundle-worker-`);
    const worker = new Worker(new URL(`file://${cliDir}${WORKER_FILE}`));
    try {
      fs.writeFileSync(`${root}/a.txt`, 'hello');
      const job: AcquireJob = {
        kind: 'acquire',
        id: 7,
        request: { root, uri: '/a.txt', match: 'exact', limits: { ...DEFAULT_LIMITS } },
        cancel: new SharedArrayBuffer(4),
        surfaceFs: 'openat2',
      };
      const replies: AcquireReply[] = [];
      const done = new Promise<AcquireReply>((resolve, reject) => {
        worker.on('error', reject);
        worker.on('message', (reply: AcquireReply) => {
          replies.push(reply);
          if ('outcome' in reply || 'failure' in reply) resolve(reply);
        });
      });
      worker.postMessage(job);
      const last = await done;
      assert.ok('outcome' in last, JSON.stringify(last));
      assert.equal(last.implementation, 'openat2');
      assert.equal(last.outcome.kind, 'done');
      const uris: string[] = [];
      for (const reply of replies)
        if ('entries' in reply) for (const entry of unpackSurfaceEntries(reply.entries)) uris.push(entry.uri);
      if (last.outcome.kind === 'done') for (const entry of last.outcome.result.entries) uris.push(entry.uri);
      assert.deepEqual(uris, ['/a.txt']);
    } finally {
      await worker.terminate();
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
