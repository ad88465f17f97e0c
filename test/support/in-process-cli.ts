import { classifyFailure, EXIT_OK } from '../../src/cli/exit-status.js';
import type { CliIo } from '../../src/cli/io.js';
import { buildProgram } from '../../src/cli/program.js';

export interface InProcessResult {
  status: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `witness <args>` in this process through `buildProgram` with a fake IO, mapping a failure to its
 * exit status and stderr message exactly as main.ts does. The environment is only what the test passes.
 */
export async function witness(
  args: readonly string[],
  options: { env?: Record<string, string | undefined>; signal?: AbortSignal } = {},
): Promise<InProcessResult> {
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    out: (text) => {
      stdout += text;
    },
    err: (text) => {
      stderr += text;
    },
    signal: options.signal ?? new AbortController().signal,
    env: options.env ?? {},
    errIsTTY: false,
  };
  try {
    await buildProgram(io).parseAsync(['node', 'witness', ...args]);
    return { status: EXIT_OK, stdout, stderr };
  } catch (error) {
    const failure = classifyFailure(error, io.signal.aborted);
    if (failure.message !== undefined) stderr += `${failure.message}\n`;
    return { status: failure.status, stdout, stderr };
  }
}
