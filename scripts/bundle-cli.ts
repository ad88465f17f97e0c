/**
 * Bundles the `witness` CLI into `dist/cli/` (issue 14, row 4c): `npm run build` (and so `npm ci`, through
 * `prepare`) runs `tsc` and then this. The package's `bin` is `dist/cli/main.js`; the library entry points
 * (`witness`, `witness/memory`, …) stay the per-module `tsc` output in `dist/src/`.
 *
 * What the bundle buys, and what it keeps:
 * - zod is bundled and tree-shaken, so the CLI loads the schema kinds it uses (≈ 200 KB) instead of zod's
 *   whole classic build with every locale (≈ 100 modules, 750 KB). English messages stay: zod's classic
 *   schemas register the English locale when the first schema is constructed.
 * - commander is bundled: no CommonJS export scan of it at start-up.
 * - Code splitting keeps per-command loading: each command module, the runner, the targets and the
 *   memory are their own chunks, loaded by the dynamic imports of `src/cli/command-modules.ts` only when
 *   a command needs them. Database drivers, the MCP SDK, koffi (native code) and every other dependency
 *   stay ordinary `node_modules` imports, resolved at run time as before.
 * - The acquisition worker is built apart, as one CommonJS file, `dist/cli/acquire-worker.cjs` (entry: the
 *   library's own worker, `src/sources/local-file/acquire-worker.ts`): a worker thread boots a whole Node environment of its own, and an
 *   ES-module entry also made it set up the ES module loader and load 8 chunk files, ≈ 10–20 ms of the
 *   worker's CPU on every `witness score` (docs/perf/s15-start.md). The pool's source names
 *   `new URL('./acquire-worker.js', import.meta.url)` (right for the per-module library in `dist/src`);
 *   the bundle rewrites that one expression to `./acquire-worker.cjs` while bundling, and the build fails
 *   if the expression is not found exactly once. It also fails if any `new URL('./…', import.meta.url)`
 *   in the output names a file that was not emitted, so a moved worker cannot ship as a CLI that breaks
 *   at its first acquisition.
 * - Not minified, and every file has a linked source map: stack traces name the original functions at
 *   readable lines of the bundle, and `node --enable-source-maps` maps them back to `src/`.
 */

import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const OUT_DIR = join(PACKAGE_ROOT, 'dist', 'cli');

/** Dependencies compiled into the bundle; every other dependency is imported from node_modules at run time. */
export const BUNDLED_PACKAGES = ['zod', 'commander'] as const;

/** The CLI's entry point (ES modules, split into chunks). */
export const CLI_ENTRY_POINT = 'src/cli/main.ts';
/** The acquisition worker's entry point, bundled alone as CommonJS into {@link WORKER_FILE}. */
export const WORKER_ENTRY_POINT = 'src/sources/local-file/acquire-worker.ts';
/** The worker's file name in the bundle, next to the chunks. */
export const WORKER_FILE = 'acquire-worker.cjs';
/** The expression by which the pool (src/sources/local-file/acquisition-pool.ts) finds its worker. */
const POOL_MODULE = /[\\/]sources[\\/]local-file[\\/]acquisition-pool\.ts$/;
const POOL_WORKER_URL = "new URL('./acquire-worker.js', import.meta.url)";

function externalPackages(): string[] {
  const manifest = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
    devDependencies?: Record<string, string>;
  };
  const names = [...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.devDependencies ?? {})];
  const bundled: readonly string[] = BUNDLED_PACKAGES;
  return names.filter((name) => !bundled.includes(name));
}

/** Every `new URL('./name', import.meta.url)` in the output must name an emitted file. */
export function checkRelativeUrls(outDir: string): void {
  const emitted = new Set(readdirSync(outDir));
  const pattern = /new URL\(\s*["']\.\/([^"']+)["']\s*,\s*import\.meta\.url\s*\)/g;
  for (const file of emitted) {
    if (!file.endsWith('.js')) continue;
    const text = readFileSync(join(outDir, file), 'utf8');
    for (const match of text.matchAll(pattern)) {
      const name = match[1] as string;
      if (!emitted.has(name)) {
        throw new Error(`dist/cli/${file} refers to ./${name}, which the bundle does not contain`);
      }
    }
  }
}

/**
 * The pool's source with its worker's URL pointed at {@link WORKER_FILE}; throws unless the expression
 * occurs exactly once (a pool that finds its worker some other way must be looked at, not guessed at).
 */
export function pointPoolAtWorkerFile(source: string, file = 'acquisition-pool.ts'): string {
  const parts = source.split(POOL_WORKER_URL);
  if (parts.length !== 2) {
    throw new Error(
      `${file}: expected ${POOL_WORKER_URL} exactly once (found ${parts.length - 1}); scripts/bundle-cli.ts points it at ./${WORKER_FILE}`,
    );
  }
  return parts.join(`new URL('./${WORKER_FILE}', import.meta.url)`);
}

const workerUrlPlugin: esbuild.Plugin = {
  name: 'witness-worker-url',
  setup(build) {
    build.onLoad({ filter: POOL_MODULE }, (args) => ({
      contents: pointPoolAtWorkerFile(readFileSync(args.path, 'utf8'), args.path),
      loader: 'ts',
    }));
  },
};

export async function bundleCli(outDir = OUT_DIR): Promise<void> {
  rmSync(outDir, { recursive: true, force: true });
  const common = {
    absWorkingDir: PACKAGE_ROOT,
    outdir: outDir,
    entryNames: '[name]',
    bundle: true,
    platform: 'node',
    target: 'node20',
    sourcemap: 'linked',
    external: externalPackages(),
    logLevel: 'warning',
  } satisfies esbuild.BuildOptions;
  await esbuild.build({
    ...common,
    entryPoints: { main: CLI_ENTRY_POINT },
    // Flat, next to the entry points: relative URLs mean the same from every chunk.
    chunkNames: '[name]-[hash]',
    splitting: true,
    format: 'esm',
    plugins: [workerUrlPlugin],
    // commander is CommonJS and requires Node's built-ins; an ES module has no `require` of its own.
    banner: {
      js: "import { createRequire as __witnessCreateRequire } from 'node:module'; const require = __witnessCreateRequire(import.meta.url);",
    },
  });
  await esbuild.build({
    ...common,
    entryPoints: { [WORKER_FILE.replace(/\.cjs$/, '')]: WORKER_ENTRY_POINT },
    outExtension: { '.js': '.cjs' },
    format: 'cjs',
    // The walk's modules find koffi (createRequire) and probe their own file and directory through
    // `import.meta.url`: in this file it is the file's own URL, as it is for each module in dist/src.
    define: { 'import.meta.url': '__witnessModuleUrl' },
    // Strict mode first: the sources are ES modules, always strict; esbuild's own "use strict" comes after
    // the banner, where it would be an ordinary expression.
    banner: {
      js: "'use strict'; const __witnessModuleUrl = require('node:url').pathToFileURL(__filename).href;",
    },
  });
  checkRelativeUrls(outDir);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await bundleCli();
