import { surface } from '../../src/models/scorable.js';
import { type AcquireRequest, acquireSync } from '../../src/sources/local-file/acquire-sync.js';
import { acquisitionPool } from '../../src/sources/local-file/acquisition-pool.js';
import { HELPER_BATCH_FILES } from '../../src/sources/local-file/read-lanes.js';
import { chooseSurfaceFs } from '../../src/sources/local-file/surface-fs-choice.js';
import { LocalFileSurfaceSource } from '../../src/sources/local-file-source.js';
import type { BenchConfig } from '../config.js';
import { interleave, median, timeAsync, timeCommand, timeSync } from '../measure.js';
import { naiveHashTree } from '../naive-node.js';
import { atMost, type BenchContext, type BenchRow, formatMs } from '../table.js';
import { ensureMainTree } from '../trees.js';

/**
 * Row 1: `/**` over the small-file tree, every file read and hashed, budgets raised to fit. Witness is
 * timed through the public source (worker, transfer, schema validation) with the seam it chooses
 * (openat2 where available), through the same source forced onto the procfs seam (1d: the gain of
 * openat2, same run), and, for the breakdown, as the bare synchronous walk on this thread. Row 1e runs
 * the same job on the pool with one reader thread and with two sharing the walk (does the second pay?).
 */

/** One job on the shared pool, entries counted as they stream; resolves with files read and batches. */
function poolAcquire(request: AcquireRequest, readers: 1 | 2): Promise<{ files: number; helped: number }> {
  return new Promise((resolve, reject) => {
    let files = 0;
    acquisitionPool.submit(
      { request, surfaceFs: 'auto', cancel: new SharedArrayBuffer(4), readers },
      {
        onEntries: (batch) => {
          files += Array.isArray(batch) ? batch.length : batch.uris.length;
        },
        onDone: (outcome) => {
          if (outcome.kind !== 'done') reject(new Error('cancelled'));
          else
            resolve({
              files: files + outcome.result.entries.length,
              helped: outcome.result.helperBatches ?? 0,
            });
        },
        onFailure: reject,
      },
    );
  });
}
export async function benchGlobAll(config: BenchConfig, context: BenchContext): Promise<BenchRow[]> {
  const tree = ensureMainTree(context.base, config.mainTree.files, config.mainTree.directories);
  const limits = {
    maxFiles: tree.files + 1,
    maxContentBytes: 1_000_000,
    maxReadBytes: tree.bytes + 1,
    maxListedEntries: tree.files + tree.directories + 1,
  };
  const what = `glob /** over ${tree.files.toLocaleString('en-US')} files in ${tree.directories.toLocaleString('en-US')} dirs, each read + sha256`;
  const source = new LocalFileSurfaceSource({ root: tree.root, ...limits });
  const procfs = new LocalFileSurfaceSource({ root: tree.root, ...limits, surfaceFs: 'procfs' });
  const seam = chooseSurfaceFs('auto');
  if (!seam.ok) throw new Error(seam.message);
  try {
    // Warm-up: starts the worker, fills the page cache, and checks the acquisition saw every file.
    const first = await source.acquire(surface('/**', 'glob'));
    const naive = await naiveHashTree(tree.root);
    const viaProcfs = await procfs.acquire(surface('/**', 'glob'));
    const problems: string[] = [];
    if (first.acquisition !== 'complete' || first.payload.entries.length !== tree.files) {
      problems.push(`acquisition ${first.acquisition} with ${first.payload.entries.length} entries`);
    }
    if (naive.size !== tree.files) problems.push(`naive baseline hashed ${naive.size} files`);
    if (JSON.stringify(viaProcfs.payload) !== JSON.stringify(first.payload)) {
      problems.push('the procfs and openat2 seams returned different evidence');
    }
    const request = { root: tree.root, uri: '/**', match: 'glob' as const, limits };
    const poolRequest: AcquireRequest = { ...request, limits: { ...source.limits } };
    const helped: number[] = [];
    const timePool = (readers: 1 | 2) =>
      timeAsync(async () => {
        const run = await poolAcquire(poolRequest, readers);
        if (run.files !== tree.files)
          problems.push(`the pool job (${readers} readers) read ${run.files} files`);
        if (readers === 2) helped.push(run.helped);
      });
    const find = ['-c', 'find "$1" -type f -print0 | xargs -0 -P2 sha256sum > /dev/null', 'sh', tree.root];
    context.log(`row 1: ${config.runs} rounds over ${tree.root}`);
    const times = await interleave(config.runs, {
      witness: () => timeAsync(() => source.acquire(surface('/**', 'glob'))),
      procfs: () => timeAsync(() => procfs.acquire(surface('/**', 'glob'))),
      sync: () => timeSync(() => acquireSync(request, seam.fs, () => false)),
      oneReader: () => timePool(1),
      twoReaders: () => timePool(2),
      find: () => {
        const result = timeCommand('sh', find);
        if (result.status !== 0) problems.push(`find | xargs exited ${result.status}: ${result.stderr}`);
        return result.ms;
      },
      naive: () => timeAsync(() => naiveHashTree(tree.root)),
    });
    const witness = median(times.witness as number[]);
    const procfsMs = median(times.procfs as number[]);
    const used = String(first.metadata.surfaceFs);
    const sync = median(times.sync as number[]);
    const find_ = median(times.find as number[]);
    const naiveMs = median(times.naive as number[]);
    const oneReader = median(times.oneReader as number[]);
    const twoReaders = median(times.twoReaders as number[]);
    const batches = Math.ceil(tree.files / HELPER_BATCH_FILES);
    const error = problems.length > 0 ? problems.join('; ') : undefined;
    const stats = first.metadata.stats as Record<string, number> | undefined;
    return [
      {
        id: '1a',
        what,
        witness: formatMs(witness),
        baseline: `find -print0 + xargs -0 -P2 sha256sum ${formatMs(find_)}`,
        ratio: witness / find_,
        target: '≤ 1.50× (goal 1.30×)',
        verdict: error ? 'ERROR' : atMost(witness / find_, 1.5),
        note:
          error ??
          `seam ${used}; per acquisition: ${stats?.directoriesListed} dirs listed, ${stats?.filesRead} files read, ${stats?.bytesRead} bytes`,
      },
      {
        id: '1b',
        what,
        witness: formatMs(witness),
        baseline: `naive Node (readdir + readFile, 16 in flight) ${formatMs(naiveMs)}`,
        ratio: witness / naiveMs,
        target: '≤ 0.30×',
        verdict: error ? 'ERROR' : atMost(witness / naiveMs, 0.3),
      },
      {
        id: '1c',
        what: `same, bare synchronous walk on one thread (${seam.implementation} seam; no worker, no transfer, no validation)`,
        witness: formatMs(sync),
        baseline: `find -print0 + xargs -0 -P2 sha256sum ${formatMs(find_)}`,
        ratio: sync / find_,
        target: 'breakdown',
        verdict: 'info',
        note: `1a − 1c = ${formatMs(witness - sync)} (1a: two reader threads, plus the transfer and validation this walk does without)`,
      },
      {
        id: '1d',
        what: `same, through the ${used} seam vs the procfs seam (same source, same run)`,
        witness: formatMs(witness),
        baseline: `procfs seam ${formatMs(procfsMs)}`,
        ratio: witness / procfsMs,
        target: 'breakdown',
        verdict: error ? 'ERROR' : 'info',
      },
      {
        id: '1e',
        what: 'same job on the pool: two reader threads sharing the walk vs one (no validation)',
        witness: formatMs(twoReaders),
        baseline: `one reader ${formatMs(oneReader)}`,
        ratio: twoReaders / oneReader,
        target: 'breakdown',
        verdict: error ? 'ERROR' : 'info',
        note: `the second reader read ${helped.map((count) => `${Math.round((100 * count) / batches)} %`).join(', ')} of the files (per round)`,
      },
    ];
  } finally {
    await source.close();
    await procfs.close();
  }
}
