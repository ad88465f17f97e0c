import { surface } from '../../src/models/scorable.js';
import { acquireSync } from '../../src/sources/local-file/acquire-sync.js';
import { nodeSurfaceFs } from '../../src/sources/local-file/surface-fs.js';
import { LocalFileSurfaceSource } from '../../src/sources/local-file-source.js';
import type { BenchConfig } from '../config.js';
import { interleave, median, timeAsync, timeCommand, timeSync } from '../measure.js';
import { naiveHashTree } from '../naive-node.js';
import { atMost, type BenchContext, type BenchRow, formatMs } from '../table.js';
import { ensureMainTree } from '../trees.js';

/**
 * Row 1: `/**` over the small-file tree, every file read and hashed, budgets raised to fit. Witness is
 * timed through the public source (worker, transfer, schema validation) and, for the breakdown, as the
 * bare synchronous walk on this thread.
 */
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
  try {
    // Warm-up: starts the worker, fills the page cache, and checks the acquisition saw every file.
    const first = await source.acquire(surface('/**', 'glob'));
    const naive = await naiveHashTree(tree.root);
    const problems: string[] = [];
    if (first.acquisition !== 'complete' || first.payload.entries.length !== tree.files) {
      problems.push(`acquisition ${first.acquisition} with ${first.payload.entries.length} entries`);
    }
    if (naive.size !== tree.files) problems.push(`naive baseline hashed ${naive.size} files`);
    const request = { root: tree.root, uri: '/**', match: 'glob' as const, limits };
    const find = ['-c', 'find "$1" -type f -print0 | xargs -0 -P2 sha256sum > /dev/null', 'sh', tree.root];
    context.log(`row 1: ${config.runs} rounds over ${tree.root}`);
    const times = await interleave(config.runs, {
      witness: () => timeAsync(() => source.acquire(surface('/**', 'glob'))),
      sync: () => timeSync(() => acquireSync(request, nodeSurfaceFs, () => false)),
      find: () => {
        const result = timeCommand('sh', find);
        if (result.status !== 0) problems.push(`find | xargs exited ${result.status}: ${result.stderr}`);
        return result.ms;
      },
      naive: () => timeAsync(() => naiveHashTree(tree.root)),
    });
    const witness = median(times.witness as number[]);
    const sync = median(times.sync as number[]);
    const find_ = median(times.find as number[]);
    const naiveMs = median(times.naive as number[]);
    const error = problems.length > 0 ? problems.join('; ') : undefined;
    const stats = first.metadata.stats as Record<string, number> | undefined;
    return [
      {
        id: '1a',
        what,
        witness: formatMs(witness),
        baseline: `find -print0 + xargs -0 -P2 sha256sum ${formatMs(find_)}`,
        ratio: witness / find_,
        target: '≤ 1.50×',
        verdict: error ? 'ERROR' : atMost(witness / find_, 1.5),
        note:
          error ??
          `per acquisition: ${stats?.directoriesListed} dirs listed, ${stats?.filesRead} files read, ${stats?.bytesRead} bytes`,
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
        what: 'same, bare synchronous walk on one thread (no worker, no transfer, no validation)',
        witness: formatMs(sync),
        baseline: `find -print0 + xargs -0 -P2 sha256sum ${formatMs(find_)}`,
        ratio: sync / find_,
        target: 'breakdown',
        verdict: 'info',
        note: `worker transfer + observation validation cost ${formatMs(witness - sync)} of ${formatMs(witness)}`,
      },
    ];
  } finally {
    await source.close();
  }
}
