/**
 * Bundles the `witness` CLI into `dist/cli/`, so that a command's start-up is not spent loading modules:
 * `npm run build` (and so `npm ci`, through `prepare`) runs `tsc` and then this. The package's `bin` is `dist/cli/main.js`; the library entry points
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
 *   worker's CPU on every `witness score`. The pool's source names
 *   `new URL('./acquire-worker.js', import.meta.url)` (right for the per-module library in `dist/src`);
 *   the bundle rewrites that one expression to `./acquire-worker.cjs` while bundling, and the build fails
 *   if the expression is not found exactly once. It also fails if any `new URL('./…', import.meta.url)`
 *   in the output names a file that was not emitted, so a moved worker cannot ship as a CLI that breaks
 *   at its first acquisition.
 * - `witness score` loads one file, `dist/cli/score-process.js` (entry: `src/cli/score-process.ts`), built a
 *   third time without splitting: the split tree loads ≈ 35 chunks for it, and Node 20's ES module loader
 *   costs ≈ 0.7 ms per file before any code runs. Every module of that file is
 *   loaded by no other file of a `witness score` process, so none exists twice (a second copy of a class
 *   would break `instanceof`, a second copy of a module's state would split it), with one exception made on
 *   purpose: the acquisition pool, which main.js loads first to start the worker early, stays
 *   `./acquisition-pool.js` (an entry of the split build), so the file uses that very instance; the build
 *   fails if the file holds any module of the pool's graph. The memory's drivers (`--db`) are reached only
 *   through `import()`, which a file without splitting turns into lazily run code while hoisting the drivers'
 *   static imports to the file's top: they are taken with `require` where they are used instead, and the
 *   build fails if the file imports any package at its top.
 * - Not minified, and every file has a linked source map: stack traces name the original functions at
 *   readable lines of the bundle, and `node --enable-source-maps` maps them back to `src/`.
 */

import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
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
/** `witness score`'s module graph (src/cli/score-process.ts), bundled alone into {@link SCORE_FILE}. */
export const SCORE_ENTRY_POINT = 'src/cli/score-process.ts';
/** The score command's file in the bundle, next to the chunks; main.js imports it by this name. */
export const SCORE_FILE = 'score-process.js';
/** The pool's module, an entry of the split build by this name, which the score file imports. */
const POOL_ENTRY_POINT = 'src/sources/local-file/acquisition-pool.ts';
export const POOL_FILE = 'acquisition-pool.js';
/**
 * Packages the score file reaches only through `import()` (the memory, behind `--db`), required where they
 * are used so that they load only then; any other package the file reaches fails the build.
 */
export const LAZILY_REQUIRED_PACKAGES = ['better-sqlite3', 'kysely', 'pg'] as const;
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
  checkNamedFiles(outDir, /new URL\(\s*["']\.\/([^"']+)["']\s*,\s*import\.meta\.url\s*\)/g, 'refers to');
}

/**
 * Throws unless every `./name` that `pattern` (its first group) finds in an emitted `.js` file of `outDir`
 * is itself an emitted file.
 */
function checkNamedFiles(outDir: string, pattern: RegExp, verb: string): void {
  const emitted = new Set(readdirSync(outDir));
  for (const file of emitted) {
    if (!file.endsWith('.js')) continue;
    const text = readFileSync(join(outDir, file), 'utf8');
    for (const match of text.matchAll(pattern)) {
      const name = match[1] as string;
      if (!emitted.has(name)) {
        throw new Error(`dist/cli/${file} ${verb} ./${name}, which the bundle does not contain`);
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

/**
 * Every relative import in the output (`from "./x.js"`, `import("./x.js")`, `import "./x.js"`) must name an
 * emitted file: main.js imports the score file, and the score file the pool's entry, by name.
 */
export function checkRelativeImports(outDir: string): void {
  checkNamedFiles(outDir, /(?:\bfrom\s*|\bimport\s*\(\s*|^import\s*)["']\.\/([^"']+)["']/gm, 'imports');
}

/**
 * The score file may import only Node's built-ins and the pool's entry at its top: a package imported
 * there would load on every `witness score` (the memory's drivers, hoisted out of the code `--db` runs).
 */
export function checkScoreFileImports(text: string, file = SCORE_FILE): void {
  const pattern = /^import\s*(?:[^"';]*?\bfrom\s*)?["']([^"']+)["']/gm;
  for (const match of text.matchAll(pattern)) {
    const specifier = match[1] as string;
    if (specifier.startsWith('node:') || specifier === `./${POOL_FILE}`) continue;
    throw new Error(
      `dist/cli/${file} imports ${specifier} at its top, so every \`witness score\` would load it; reach it through import() or add it to LAZILY_REQUIRED_PACKAGES in scripts/bundle-cli.ts`,
    );
  }
}

/**
 * Source files that are in both `scoreInputs` and the pool's graph: each would exist twice in a
 * `witness score` process (main.js loads the pool's entry, the score file its own copy).
 */
export function modulesInBoth(scoreInputs: readonly string[], poolGraph: ReadonlySet<string>): string[] {
  return scoreInputs.filter((input) => poolGraph.has(input));
}

/** The source files of `entry`'s output and of every chunk it imports statically, from a metafile. */
function staticGraphInputs(metafile: esbuild.Metafile, entry: string): Set<string> {
  const inputs = new Set<string>();
  const seen = new Set<string>();
  const visit = (output: string) => {
    if (seen.has(output)) return;
    seen.add(output);
    const described = metafile.outputs[output];
    if (described === undefined) throw new Error(`the metafile has no output ${output}`);
    for (const input of Object.keys(described.inputs)) inputs.add(input);
    for (const imported of described.imports) {
      if (imported.kind === 'import-statement' && !imported.external) visit(imported.path);
    }
  };
  visit(entry);
  return inputs;
}

/** In the split build, main.js's `import('./score-process.js')` names the score file, built apart. */
const scoreFileExternalPlugin: esbuild.Plugin = {
  name: 'witness-score-file-external',
  setup(build) {
    build.onResolve({ filter: /^\.\/score-process\.js$/ }, (args) =>
      join(args.resolveDir, args.path) === join(PACKAGE_ROOT, SCORE_ENTRY_POINT).replace(/\.ts$/, '.js')
        ? { path: `./${SCORE_FILE}`, external: true }
        : undefined,
    );
  },
};

/** In the score file: the pool is main.js's instance; the drivers are required where they are used. */
const scoreFilePlugin: esbuild.Plugin = {
  name: 'witness-score-file',
  setup(build) {
    const poolSource = join(PACKAGE_ROOT, POOL_ENTRY_POINT);
    build.onResolve({ filter: /[\\/]acquisition-pool\.js$/ }, (args) =>
      join(args.resolveDir, args.path).replace(/\.js$/, '.ts') === poolSource
        ? { path: `./${POOL_FILE}`, external: true }
        : undefined,
    );
    const lazily = new RegExp(`^(?:${LAZILY_REQUIRED_PACKAGES.join('|')})$`);
    build.onResolve({ filter: lazily }, (args) =>
      args.kind === 'import-statement' ? { path: args.path, namespace: 'witness-required' } : undefined,
    );
    // A CommonJS module of its own: esbuild runs it (and so the `require`) when the importing module is
    // first initialized, which in a file without splitting is when the `import()` that reaches it runs.
    build.onLoad({ filter: /.*/, namespace: 'witness-required' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)});`,
      loader: 'js',
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
  // commander is CommonJS and requires Node's built-ins; an ES module has no `require` of its own.
  const esmBanner = {
    js: "import { createRequire as __witnessCreateRequire } from 'node:module'; const require = __witnessCreateRequire(import.meta.url);",
  };
  const split = await esbuild.build({
    ...common,
    entryPoints: { main: CLI_ENTRY_POINT, [POOL_FILE.replace(/\.js$/, '')]: POOL_ENTRY_POINT },
    // Flat, next to the entry points: relative URLs mean the same from every chunk.
    chunkNames: '[name]-[hash]',
    splitting: true,
    format: 'esm',
    plugins: [workerUrlPlugin, scoreFileExternalPlugin],
    banner: esmBanner,
    metafile: true,
  });
  const score = await esbuild.build({
    ...common,
    entryPoints: { [SCORE_FILE.replace(/\.js$/, '')]: SCORE_ENTRY_POINT },
    format: 'esm',
    plugins: [scoreFilePlugin],
    banner: esmBanner,
    metafile: true,
  });
  const poolGraph = staticGraphInputs(split.metafile, relative(PACKAGE_ROOT, join(outDir, POOL_FILE)));
  const twice = modulesInBoth(Object.keys(score.metafile.inputs), poolGraph);
  if (twice.length > 0) {
    throw new Error(
      `dist/cli/${SCORE_FILE} holds modules that main.js also loads through ./${POOL_FILE}: ${twice.join(', ')}; a \`witness score\` process would hold two copies of each. Where the score path needs them, import them through acquisition-pool.ts (re-exported there), which the score file takes from ./${POOL_FILE}`,
    );
  }
  checkScoreFileImports(readFileSync(join(outDir, SCORE_FILE), 'utf8'));
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
  checkRelativeImports(outDir);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await bundleCli();
