import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BenchRow } from '../table.js';

/**
 * The skeleton of a row that measures one thing at several sizes (rows 12 and 14): a private temporary
 * directory for the row, one measurement per size, smallest first, and a comparison of the largest with
 * the smallest measured in the same run. A size whose measurement failed names its problem; a row with
 * any problem, or with fewer than two sizes measured, is one ERROR row instead of its comparisons.
 */

/** What one size gave: its measurement, or why there is none. */
export type AtSize<M> = { measured: M } | { problem: string };

export interface AtSizesOptions<M> {
  sizes: readonly number[];
  /** The temporary directory's name prefix ("witness-bench-archive-"). */
  prefix: string;
  /** The id and subject of the ERROR row ("14a", "witness import / export of a large archive"). */
  errorRow: { id: string; what: string };
  /** Measures one size, with the row's directory (removed after the last size). */
  measure: (size: number, dir: string) => Promise<AtSize<M>>;
}

export type AtSizesResult<M> =
  | { ok: true; results: M[]; first: M; last: M }
  | { ok: false; rows: BenchRow[] };

export async function measureAtSizes<M>(options: AtSizesOptions<M>): Promise<AtSizesResult<M>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), options.prefix));
  const results: M[] = [];
  const problems: string[] = [];
  try {
    for (const size of options.sizes) {
      const result = await options.measure(size, dir);
      if ('problem' in result) problems.push(result.problem);
      else results.push(result.measured);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const first = results[0];
  const last = results.at(-1);
  if (problems.length > 0 || first === undefined || last === undefined || results.length < 2) {
    const note = problems.join('; ') || 'fewer than two sizes were measured';
    const row: BenchRow = {
      ...options.errorRow,
      witness: '—',
      baseline: '—',
      ratio: null,
      target: '—',
      verdict: 'ERROR',
      note,
    };
    return { ok: false, rows: [row] };
  }
  return { ok: true, results, first, last };
}
