import path from 'node:path';
import { surface } from '../../src/models/scorable.js';
import { LocalFileSurfaceSource } from '../../src/sources/local-file-source.js';
import type { BenchConfig } from '../config.js';
import { hasTool, interleave, median, timeAsync, timeCommand } from '../measure.js';
import { atMost, type BenchContext, type BenchRow, formatMs, formatRate } from '../table.js';
import { ensureBigFiles } from '../trees.js';

/** Row 3: read + sha256 throughput on a few large files against `openssl dgst -sha256` and `sha256sum`. */
export async function benchHashing(config: BenchConfig, context: BenchContext): Promise<BenchRow[]> {
  const big = ensureBigFiles(context.base, config.bigFileSizesMiB);
  const files = big.names.map((name) => path.join(big.root, name));
  const source = new LocalFileSurfaceSource({ root: big.root, maxReadBytes: big.bytes + 1 });
  const tools = {
    openssl: hasTool('openssl', ['version']),
    sha256sum: hasTool('sha256sum'),
  };
  try {
    const first = await source.acquire(surface('/*', 'glob'));
    const problems: string[] = [];
    if (first.acquisition !== 'complete' || first.payload.entries.length !== files.length) {
      problems.push(`acquisition ${first.acquisition} with ${first.payload.entries.length} entries`);
    }
    context.log(`row 3: ${config.runs} rounds over ${files.length} files (${big.bytes} bytes)`);
    const contenders: Record<string, () => Promise<number> | number> = {
      witness: () => timeAsync(() => source.acquire(surface('/*', 'glob'))),
    };
    if (tools.openssl) contenders.openssl = () => timeCommand('openssl', ['dgst', '-sha256', ...files]).ms;
    if (tools.sha256sum) contenders.sha256sum = () => timeCommand('sha256sum', files).ms;
    const times = await interleave(config.runs, contenders);
    const witness = median(times.witness as number[]);
    const mibPerSecond = (ms: number) => formatRate(big.bytes / (1 << 20) / (ms / 1000), 'MiB');
    const sizes = config.bigFileSizesMiB.join(' + ');
    const error = problems.length > 0 ? problems.join('; ') : undefined;
    const row = (id: string, tool: keyof typeof tools, label: string, limit: number | null): BenchRow => {
      const what = `read + sha256 of ${sizes} MiB files`;
      const witnessCell = `${mibPerSecond(witness)} (${formatMs(witness)})`;
      if (!tools[tool]) {
        return {
          id,
          what,
          witness: witnessCell,
          baseline: `${tool} missing on this machine`,
          ratio: null,
          target: limit === null ? 'reference' : `≤ ${limit.toFixed(2)}×`,
          verdict: 'n/a',
        };
      }
      const base = median(times[tool] as number[]);
      return {
        id,
        what,
        witness: witnessCell,
        baseline: `${label} ${mibPerSecond(base)} (${formatMs(base)})`,
        ratio: witness / base,
        target: limit === null ? 'reference' : `≤ ${limit.toFixed(2)}×`,
        verdict: error ? 'ERROR' : limit === null ? 'info' : atMost(witness / base, limit),
        ...(error ? { note: error } : {}),
      };
    };
    return [row('3a', 'openssl', 'openssl dgst -sha256', 1.3), row('3b', 'sha256sum', 'sha256sum', null)];
  } finally {
    await source.close();
  }
}
