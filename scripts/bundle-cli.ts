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
 * - The acquisition worker is a second entry point, emitted as `dist/cli/acquire-worker.js` next to the
 *   chunks, which is where `new URL('./acquire-worker.js', import.meta.url)` in the pool looks for it. The
 *   build fails if any such `new URL('./…', import.meta.url)` in the output names a file that was not
 *   emitted, so a moved worker cannot ship as a CLI that breaks at its first acquisition.
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

/** The bundle's entry points: the CLI, and the worker it spawns (by file name, next to the chunks). */
export const BUNDLE_ENTRY_POINTS = {
  main: 'src/cli/main.ts',
  'acquire-worker': 'src/cli/acquire-worker-entry.ts',
} as const;

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

export async function bundleCli(outDir = OUT_DIR): Promise<void> {
  rmSync(outDir, { recursive: true, force: true });
  await esbuild.build({
    absWorkingDir: PACKAGE_ROOT,
    entryPoints: BUNDLE_ENTRY_POINTS,
    outdir: outDir,
    entryNames: '[name]',
    // Flat, next to the entry points: relative URLs mean the same from every chunk.
    chunkNames: '[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'linked',
    external: externalPackages(),
    // commander is CommonJS and requires Node's built-ins; an ES module has no `require` of its own.
    banner: {
      js: "import { createRequire as __witnessCreateRequire } from 'node:module'; const require = __witnessCreateRequire(import.meta.url);",
    },
    logLevel: 'warning',
  });
  checkRelativeUrls(outDir);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await bundleCli();
