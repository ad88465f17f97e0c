import { spawn } from 'node:child_process';
import path from 'node:path';
import { runWitness } from '../../src/cli/run-witness.js';

/** The built CLI, as `npm install` leaves it (tests run from the repository root). */
export const CLI_PATH = path.resolve('dist/src/cli/main.js');

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `witness <args>` in this process, through the same runner as the `witness` binary
 * (`runWitness`: the command tree, the error classification, the exit status), with a fake IO that
 * collects stdout and stderr. No `node` is started, so a CLI test costs what its command costs.
 */
export async function runCli(
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; signal?: AbortSignal } = {},
): Promise<CliResult & { status: number }> {
  let stdout = '';
  let stderr = '';
  const status = await runWitness(args, {
    out: (text) => {
      stdout += text;
    },
    err: (text) => {
      stderr += text;
    },
    signal: options.signal ?? new AbortController().signal,
    env: options.env ?? process.env,
    errIsTTY: false,
  });
  return { status, stdout, stderr };
}

/**
 * Runs the built `witness` as a child process: for the smoke tests of exit codes and signals only. Give a
 * `cwd` to any command that writes where it runs (`witness run` keeps its memory in ./witness.db): tests
 * run from the repository root, and nothing may be written into the checkout.
 */
export function spawnCli(
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; onSpawn?: (pid: number) => void } = {},
): Promise<CliResult & { signal: NodeJS.Signals | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_PATH, ...args], {
      env: options.env ?? process.env,
      cwd: options.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (status, signal) => resolve({ status, signal, stdout, stderr }));
    child.stdin.end('');
    if (child.pid !== undefined) options.onSpawn?.(child.pid);
  });
}
