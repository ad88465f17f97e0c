import { runCli } from './cli.js';

export interface InProcessResult {
  status: number;
  stdout: string;
  stderr: string;
}

/**
 * `witness <args>` in this process, as {@link runCli} runs it (the binary's own runner, a fake IO), but
 * with only the environment the test passes: what the command reads from the environment is then what the
 * test says, not what the machine running the tests happens to set.
 */
export async function witness(
  args: readonly string[],
  options: { env?: Record<string, string | undefined>; signal?: AbortSignal } = {},
): Promise<InProcessResult> {
  return runCli(args, {
    env: options.env ?? {},
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
}
