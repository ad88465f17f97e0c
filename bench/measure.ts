import { spawnSync } from 'node:child_process';

/** Timing helpers. Every figure in the table is a median: the machine is shared and noisy. */

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** Nearest-rank percentile of the values (0 < p ≤ 100). */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

export async function timeAsync(run: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

export function timeSync(run: () => unknown): number {
  const started = performance.now();
  run();
  return performance.now() - started;
}

export interface CommandResult {
  ms: number;
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to exit (start to exit, as a user would wait for it); output is captured. */
export function timeCommand(file: string, args: readonly string[]): CommandResult {
  const started = performance.now();
  const result = spawnSync(file, args, { encoding: 'utf8', maxBuffer: 1 << 28 });
  const ms = performance.now() - started;
  if (result.error !== undefined) throw result.error;
  return { ms, status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** True when a command can be run (`<tool> --version` or the given probe exits 0). */
export function hasTool(file: string, probe: readonly string[] = ['--version']): boolean {
  const result = spawnSync(file, probe, { stdio: 'ignore' });
  return result.error === undefined && result.status === 0;
}

/**
 * Runs each contender once per round, rounds interleaved so that load from other processes falls on all
 * of them alike, and returns every contender's times.
 */
export async function interleave(
  runs: number,
  contenders: Record<string, () => Promise<number> | number>,
): Promise<Record<string, number[]>> {
  const times: Record<string, number[]> = {};
  for (const name of Object.keys(contenders)) times[name] = [];
  for (let round = 0; round < runs; round++) {
    for (const [name, run] of Object.entries(contenders)) (times[name] as number[]).push(await run());
  }
  return times;
}
