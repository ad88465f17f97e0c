import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SINGLE_COMMANDS } from '../../src/cli/command-modules.js';

/**
 * What an import or a `witness` command line really loads, for the start-up checks
 * (entry-points.test.ts, entry-points.heavy.test.ts): each runs in a fresh child process with a
 * resolution hook (load-recorder.ts) that records every module URL it resolved.
 */

export const PACKAGE_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const RECORDER = new URL('./load-recorder.js', import.meta.url).href;
export const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
/** The bundled CLI (scripts/bundle-cli.ts), which is what the package's `bin` runs. */
export const BUNDLED_CLI = fileURLToPath(new URL('../../cli/main.js', import.meta.url));

export const HEAVY = [
  'better-sqlite3',
  'pg',
  'pg-boss',
  'kysely',
  '@modelcontextprotocol/sdk',
  'koffi',
] as const;

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
export function loadedPackages(
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

export function importing(specifier: string, names: readonly string[]) {
  const script = `const m = await import(${JSON.stringify(specifier)});
const missing = ${JSON.stringify(names)}.filter((name) => !(name in m));
if (missing.length > 0) throw new Error('missing exports: ' + missing.join(', '));`;
  return loadedPackages(['--input-type=module', '-e', script]);
}

/** The command chunks of the bundled CLI (`dist/cli/<command>-<HASH>.js`) among the resolved URLs, by command. */
export function commandChunks(urls: readonly string[]): string[] {
  const found: string[] = [];
  for (const url of urls) {
    const match = /\/dist\/cli\/([a-z]+)-[A-Z0-9]{8}\.js$/.exec(url);
    if (match?.[1] !== undefined && SINGLE_COMMANDS.includes(match[1])) found.push(match[1]);
  }
  return found.sort();
}

/** The bundle's files (names in dist/cli) among the resolved URLs. */
export function bundleFiles(urls: readonly string[]): string[] {
  const files = new Set<string>();
  for (const url of urls) {
    const match = /\/dist\/cli\/([^/]+\.js)$/.exec(url);
    if (match?.[1] !== undefined) files.add(match[1]);
  }
  return [...files].sort();
}

/** The source modules whose code the bundled CLI's loaded files hold (esbuild's `// src/….ts` markers). */
export function bundledModules(urls: readonly string[]): string[] {
  const modules = new Set<string>();
  for (const url of urls) {
    if (!/\/dist\/cli\/[^/]+\.js$/.test(url)) continue;
    for (const match of fs.readFileSync(new URL(url), 'utf8').matchAll(/^\/\/ (src\/\S+\.ts)$/gm)) {
      modules.add(match[1] as string);
    }
  }
  return [...modules].sort();
}
