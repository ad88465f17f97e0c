import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Observation } from '../../../src/models/observation.js';

/**
 * Runs acquisitions in a child `node` process: as an unprivileged user (root ignores `chmod 000`), to
 * prove a script exits on its own, or to measure peak memory in isolation. The child script is written
 * into a temp dir (readable by every user) and imports the compiled source by absolute URL.
 */

export const SOURCE_MODULE = new URL('../../../src/sources/local-file-source.js', import.meta.url).href;

/** The unprivileged user children run as (nobody). */
export const NOBODY = 65534;

export interface ChildResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  elapsedMs: number;
}

/** Writes an ES module into `dir`; `{{SOURCE}}` in the body becomes the source module's URL. */
export function writeChildScript(dir: string, name: string, body: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, body.replaceAll('{{SOURCE}}', SOURCE_MODULE), { mode: 0o644 });
  return file;
}

export function runNode(
  script: string,
  args: readonly string[],
  options: { uid?: number; timeoutMs?: number } = {},
): Promise<ChildResult> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(options.uid !== undefined ? { uid: options.uid, gid: options.uid } : {}),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, elapsedMs: performance.now() - started });
    });
  });
}

const ACQUIRE_SCRIPT = `
import { LocalFileSurfaceSource } from '{{SOURCE}}';
const [root, uri, match, surfaceFs] = process.argv.slice(2);
const source = new LocalFileSurfaceSource({ root, surfaceFs });
const observation = await source.acquire({ scorableType: 'surface', uri, match });
process.stdout.write(JSON.stringify(observation));
`;

/** Acquires `uri` under `root` in a child process running as uid/gid 65534 and returns its observation. */
export async function acquireAsNobody(
  scriptDir: string,
  root: string,
  uri: string,
  match: 'exact' | 'glob',
  surfaceFs: 'auto' | 'openat2' | 'procfs' = 'auto',
): Promise<Observation> {
  const script = writeChildScript(scriptDir, 'acquire-as-nobody.mjs', ACQUIRE_SCRIPT);
  const result = await runNode(script, [root, uri, match, surfaceFs], { uid: NOBODY });
  if (result.code !== 0) throw new Error(`child failed (${result.code}): ${result.stderr}`);
  return JSON.parse(result.stdout) as Observation;
}
