import fs from 'node:fs';
import path from 'node:path';
import { surface } from '../../src/models/scorable.js';
import { markFileSystemClock } from '../../src/sources/file-system-clock.js';
import { LocalFileSurfaceSource } from '../../src/sources/local-file-source.js';
import { diffManifests } from '../../src/verdicts/diff-manifests.js';
import type { BenchConfig } from '../config.js';
import { interleave, median, timeAsync } from '../measure.js';
import { atMost, type BenchContext, type BenchRow, formatMs } from '../table.js';

/**
 * Row 9: the change evidence of one attempt on a workspace of `changeTree.files` files.
 * 9a: one manifest (every entry listed, every file hashed) against one glob acquisition of `/**` of the
 * same tree through the same source. 9b: the whole per-attempt overhead — baseline manifest, the clean
 * moment read from the file system's clock, the final manifest (which carries the digest of every file
 * provably untouched since: baseline-digests.ts) and their diff — against the same glob acquisition (target
 * ≤ 1.5×). The tree is untouched between the two, the case every attempt's unchanged files are in.
 */
export async function benchChangeEvidence(config: BenchConfig, context: BenchContext): Promise<BenchRow[]> {
  const { files, directories } = config.changeTree ?? { files: 10_000, directories: 100 };
  const root = ensureChangeTree(context.base, files, directories);
  const source = new LocalFileSurfaceSource({
    root,
    maxFiles: files + directories + 1,
    maxListedEntries: files + directories + 1,
  });
  try {
    const problems: string[] = [];
    const glob = await source.acquire(surface('/**', 'glob'));
    const manifest = await source.acquireManifest();
    if (glob.acquisition !== 'complete' || glob.payload.entries.length !== files) {
      problems.push(`glob ${glob.acquisition} with ${glob.payload.entries.length} entries`);
    }
    if (manifest.acquisition !== 'complete' || manifest.entries.length !== files + directories) {
      problems.push(`manifest ${manifest.acquisition} with ${manifest.entries.length} entries`);
    }
    const final = await source.acquireManifest({
      reuseDigestsFrom: { baseline: manifest, mark: markFileSystemClock(context.base) },
    });
    const changes = diffManifests(manifest, final);
    if (changes.changes.length !== 0 || !changes.coverage.complete)
      problems.push('an untouched tree changed');
    // The control of the shortcut timed in 9b: on an untouched tree every digest is carried, none read.
    const carried = (final.metadata.stats as Record<string, number> | undefined)?.digestsCarried;
    if (carried !== files) problems.push(`${carried} of ${files} digests carried on an untouched tree`);
    context.log(`row 9: ${config.runs} rounds over ${files} files`);
    // CPU time (user + sys of the whole process: the acquisition thread and the main thread) beside the
    // wall time: on a shared machine the wall ratio moves with other tenants' load, the CPU ratio less.
    const cpu: Record<'glob' | 'attempt', number[]> = { glob: [], attempt: [] };
    const timed = async (into: number[] | undefined, run: () => Promise<unknown>) => {
      const before = process.cpuUsage();
      const ms = await timeAsync(run);
      const used = process.cpuUsage(before);
      into?.push((used.user + used.system) / 1000);
      return ms;
    };
    const times = await interleave(config.runs, {
      glob: () => timed(cpu.glob, () => source.acquire(surface('/**', 'glob'))),
      manifest: () => timed(undefined, () => source.acquireManifest()),
      attempt: () =>
        timed(cpu.attempt, async () => {
          const baseline = await source.acquireManifest();
          const mark = markFileSystemClock(context.base);
          diffManifests(baseline, await source.acquireManifest({ reuseDigestsFrom: { baseline, mark } }));
        }),
    });
    const globMs = median(times.glob as number[]);
    const manifestMs = median(times.manifest as number[]);
    const attemptMs = median(times.attempt as number[]);
    const globCpuMs = median(cpu.glob);
    const attemptCpuMs = median(cpu.attempt);
    const error = problems.length > 0 ? problems.join('; ') : undefined;
    return [
      {
        id: '9a',
        what: `manifest of ${files.toLocaleString('en-US')} files (listed, lstat, sha256)`,
        witness: formatMs(manifestMs),
        baseline: `glob /** ${formatMs(globMs)}`,
        ratio: manifestMs / globMs,
        target: 'info',
        verdict: error ? 'ERROR' : 'info',
        ...(error ? { note: error } : {}),
      },
      {
        id: '9b',
        what: 'per-attempt change evidence: baseline + final manifest (carried) + diff',
        witness: formatMs(attemptMs),
        baseline: `glob /** ${formatMs(globMs)}`,
        ratio: attemptMs / globMs,
        target: '≤ 1.50×',
        verdict: error ? 'ERROR' : atMost(attemptMs / globMs, 1.5),
      },
      {
        id: '9c',
        what: 'same as 9b, CPU time (user + sys, both threads)',
        witness: formatMs(attemptCpuMs),
        baseline: `glob /** ${formatMs(globCpuMs)} CPU`,
        ratio: attemptCpuMs / globCpuMs,
        target: 'info',
        verdict: error ? 'ERROR' : 'info',
      },
    ];
  } finally {
    await source.close();
  }
}

/** `directories` directories of `files / directories` small files each, generated once and reused. */
function ensureChangeTree(base: string, files: number, directories: number): string {
  const root = path.join(base, `changes-${files}f-${directories}d-v1`);
  const done = `${root}.json`;
  if (fs.existsSync(done)) return root;
  fs.rmSync(root, { recursive: true, force: true });
  const perDirectory = Math.ceil(files / directories);
  let made = 0;
  for (let d = 0; d < directories && made < files; d++) {
    const dir = path.join(root, `d${d}`);
    fs.mkdirSync(dir, { recursive: true });
    for (let f = 0; f < perDirectory && made < files; f++, made++) {
      fs.writeFileSync(path.join(dir, `f${f}.txt`), `file ${made}: ${'x'.repeat(made % 200)}\n`);
    }
  }
  fs.writeFileSync(done, `${JSON.stringify({ files, directories })}\n`);
  return root;
}
