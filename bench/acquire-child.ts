import fs from 'node:fs';
import { surface } from '../src/models/scorable.js';
import type { MatchKind } from '../src/models/vocabulary.js';
import type { SourceLimits } from '../src/sources/local-file/limits.js';
import { LocalFileSurfaceSource } from '../src/sources/local-file-source.js';

/**
 * A child process that runs one acquisition through the public source and prints what it cost, including
 * the process's peak resident memory (VmHWM from /proc/self/status, which covers the worker thread).
 * Used by row 6, and by hand for `strace -c -f` and `node --cpu-prof` (see docs/benchmarks.md).
 *
 *   node dist/bench/acquire-child.js '{"root":"/tmp/ws","uri":"/**","match":"glob","repeat":1}'
 */

export interface ChildRequest {
  root: string;
  uri: string;
  match: MatchKind;
  limits?: Partial<SourceLimits>;
  /** Acquisitions to run in a row (default 1); the report is of the last. */
  repeat?: number;
}

export interface ChildReport {
  acquisition: string;
  entries: number;
  reasons: string[];
  stats: Record<string, number>;
  durationMs: number;
  peakRssKiB: number;
}

function statusKiB(field: string): number {
  const status = fs.readFileSync('/proc/self/status', 'utf8');
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
  return match ? Number(match[1]) : Number.NaN;
}

async function main(): Promise<void> {
  const request = JSON.parse(process.argv[2] ?? '') as ChildRequest;
  const source = new LocalFileSurfaceSource({ root: request.root, ...request.limits });
  try {
    let report: ChildReport | undefined;
    for (let i = 0; i < (request.repeat ?? 1); i++) {
      const started = performance.now();
      const observation = await source.acquire(surface(request.uri, request.match));
      report = {
        acquisition: observation.acquisition,
        entries: observation.payload.entries.length,
        reasons: observation.payload.coverage.reasons,
        stats: (observation.metadata.stats ?? {}) as Record<string, number>,
        durationMs: performance.now() - started,
        peakRssKiB: 0,
      };
    }
    if (report === undefined) throw new Error('repeat must be at least 1');
    report.peakRssKiB = statusKiB('VmHWM');
    process.stdout.write(`${JSON.stringify(report)}\n`);
  } finally {
    await source.close();
  }
}

await main();
