/** One printed row of the benchmark table, and the pure functions that format the table. */

export type Verdict = 'PASS' | 'MISS' | 'info' | 'n/a' | 'ERROR';

export interface BenchRow {
  /** Row number from the issue and a letter per comparison: "1a". */
  id: string;
  what: string;
  /** The median measured for Witness, formatted with its unit. */
  witness: string;
  /** The baseline and its median, or why it is missing. */
  baseline: string;
  /** Witness ÷ baseline (time ratio: lower is better), or null when there is no baseline. */
  ratio: number | null;
  target: string;
  verdict: Verdict;
  /** Measured side facts (stats, counts) or what went wrong. */
  note?: string;
}

export interface BenchContext {
  /** Where the trees are cached. */
  base: string;
  log: (line: string) => void;
}

/** PASS when the value is at most the limit (a NaN never passes). */
export function atMost(value: number, limit: number): Verdict {
  return value <= limit ? 'PASS' : 'MISS';
}

export function atLeast(value: number, limit: number): Verdict {
  return value >= limit ? 'PASS' : 'MISS';
}

export function formatMs(ms: number): string {
  if (ms < 1) return `${ms.toFixed(3)} ms`;
  if (ms < 100) return `${ms.toFixed(1)} ms`;
  return `${Math.round(ms).toLocaleString('en-US')} ms`;
}

export function formatRate(perSecond: number, unit: string): string {
  return `${Math.round(perSecond).toLocaleString('en-US')} ${unit}/s`;
}

export function formatMiB(bytes: number): string {
  return `${(bytes / (1 << 20)).toFixed(1)} MiB`;
}

export function formatRatio(ratio: number | null): string {
  return ratio === null || !Number.isFinite(ratio) ? '—' : `${ratio.toFixed(2)}×`;
}

const HEADERS = ['#', 'measurement', 'witness (median)', 'baseline (median)', 'ratio', 'target', 'result'];

/** A Markdown table (readable as plain text too), then each row's note as a numbered line. */
export function formatTable(rows: readonly BenchRow[]): string {
  const cells = rows.map((row) => [
    row.id,
    row.what,
    row.witness,
    row.baseline,
    formatRatio(row.ratio),
    row.target,
    row.verdict,
  ]);
  const widths = HEADERS.map((header, column) =>
    Math.max(header.length, ...cells.map((line) => (line[column] as string).length)),
  );
  const render = (line: readonly string[]) =>
    `| ${line.map((cell, column) => cell.padEnd(widths[column] as number)).join(' | ')} |`;
  const lines = [render(HEADERS), `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`];
  for (const line of cells) lines.push(render(line));
  const notes = rows.filter((row) => row.note !== undefined).map((row) => `- ${row.id}: ${row.note}`);
  return notes.length === 0 ? lines.join('\n') : `${lines.join('\n')}\n\n${notes.join('\n')}`;
}
