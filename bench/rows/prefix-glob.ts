import { surface } from '../../src/models/scorable.js';
import { LocalFileSurfaceSource } from '../../src/sources/local-file-source.js';
import type { BenchConfig } from '../config.js';
import { interleave, median, timeAsync, timeCommand } from '../measure.js';
import { atMost, type BenchContext, type BenchRow, formatMs } from '../table.js';
import { ensureMainTree } from '../trees.js';

/** Row 2's acquisitions take milliseconds: more rounds than the other rows' runs steady the medians. */
const PREFIX_ROUNDS_PER_RUN = 4;

/**
 * Row 2: a deep glob behind a static prefix (`/d1/**\/x*.md`) against `find ROOT/d1 -name 'x*.md'`. Witness
 * also reads and hashes each match, which `find` does not. The walk must list only what is under the prefix:
 * the acquisition's own count of directories listed is checked against the tree's manifest.
 */
export async function benchPrefixGlob(config: BenchConfig, context: BenchContext): Promise<BenchRow[]> {
  const tree = ensureMainTree(context.base, config.mainTree.files, config.mainTree.directories);
  const uri = tree.prefix.uri;
  const source = new LocalFileSurfaceSource({
    root: tree.root,
    maxFiles: tree.files + 1,
    maxReadBytes: tree.bytes + 1,
    maxListedEntries: tree.files + tree.directories + 1,
  });
  try {
    // The first acquisition of the process, timed apart: V8 compiles the walk's code as it runs (below).
    const firstStarted = performance.now();
    const first = await source.acquire(surface(uri, 'glob'));
    const firstMs = performance.now() - firstStarted;
    const stats = first.metadata.stats as Record<string, number> | undefined;
    const problems: string[] = [];
    if (first.acquisition !== 'complete' || first.payload.entries.length !== tree.prefix.matches) {
      problems.push(`acquisition ${first.acquisition} with ${first.payload.entries.length} entries`);
    }
    const findArgs = [`${tree.root}/d1`, '-name', 'x*.md'];
    const found = timeCommand('find', findArgs);
    const foundLines = found.stdout.split('\n').filter((line) => line !== '').length;
    if (found.status !== 0 || foundLines !== tree.prefix.matches) {
      problems.push(`find exited ${found.status} and printed ${foundLines} paths`);
    }
    // V8 compiles the walk's code as it runs: the first acquisitions of a fresh pool thread take two to
    // five times as long as the rest (measured: 53, 23, 26, 27, 23, then 10–15 ms). Row 2 times the walk
    // compiled, as row 4a does; the first acquisition is reported apart.
    for (let i = 0; i < config.prefixWarmupCalls; i++) await source.acquire(surface(uri, 'glob'));
    context.log(`row 2: ${config.runs * PREFIX_ROUNDS_PER_RUN} rounds of ${uri}`);
    const times = await interleave(config.runs * PREFIX_ROUNDS_PER_RUN, {
      witness: () => timeAsync(() => source.acquire(surface(uri, 'glob'))),
      find: () => timeCommand('find', findArgs).ms,
    });
    const witness = median(times.witness as number[]);
    const find = median(times.find as number[]);
    const error = problems.length > 0 ? problems.join('; ') : undefined;
    const listed = stats?.directoriesListed ?? -1;
    return [
      {
        id: '2a',
        what: `glob ${uri} (${tree.prefix.matches} matches read + sha256)`,
        witness: formatMs(witness),
        baseline: `find ROOT/d1 -name 'x*.md' ${formatMs(find)}`,
        ratio: witness / find,
        target: '≤ 2.00×',
        verdict: error ? 'ERROR' : atMost(witness / find, 2),
        note:
          error ??
          `timed after ${config.prefixWarmupCalls + 1} acquisitions while V8 compiled the walk; the process's first took ${formatMs(firstMs)}`,
      },
      {
        id: '2b',
        what: `directories listed by ${uri}`,
        witness: `${listed} of ${tree.directories + 1}`,
        baseline: `${tree.prefix.directories} under /d1`,
        ratio: null,
        target: `= ${tree.prefix.directories}`,
        verdict: listed === tree.prefix.directories ? 'PASS' : 'MISS',
        note: `entries examined: ${stats?.entriesExamined}`,
      },
    ];
  } finally {
    await source.close();
  }
}
