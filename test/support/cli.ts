import { spawn } from 'node:child_process';
import path from 'node:path';

/** The built CLI, as `npm install` leaves it (tests run from the repository root). */
export const CLI_PATH = path.resolve('dist/src/cli/main.js');

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `witness <args>` as a child process and collects its output and exit status. */
export function runCli(
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; input?: string } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_PATH, ...args], {
      env: options.env ?? process.env,
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
    child.on('close', (status) => resolve({ status, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}
