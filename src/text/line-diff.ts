/**
 * A line diff of two texts (the injection an attacker planted in one round and the next, SPEC §15): the
 * lines both keep, the lines removed and the lines added, in order. Longest common subsequence over lines,
 * bounded: texts of more than {@link MAX_DIFF_LINES} lines each are shown as all removed and all added
 * rather than costing quadratic time on attacker-sized input.
 */

export const MAX_DIFF_LINES = 2_000;

export type DiffLine = { kind: 'same' | 'removed' | 'added'; text: string };

export function diffLines(before: string, after: string): DiffLine[] {
  const a = before.split('\n');
  const b = after.split('\n');
  if (a.length > MAX_DIFF_LINES || b.length > MAX_DIFF_LINES) {
    return [
      ...a.map((text) => ({ kind: 'removed' as const, text })),
      ...b.map((text) => ({ kind: 'added' as const, text })),
    ];
  }
  // lengths[i][j]: the longest common subsequence of a[i..] and b[j..].
  const lengths = Array.from({ length: a.length + 1 }, () => new Uint16Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i--) {
    const row = lengths[i] as Uint16Array;
    const below = lengths[i + 1] as Uint16Array;
    for (let j = b.length - 1; j >= 0; j--) {
      row[j] =
        a[i] === b[j] ? (below[j + 1] as number) + 1 : Math.max(below[j] as number, row[j + 1] as number);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push({ kind: 'same', text: a[i++] as string });
      j++;
    } else if (
      ((lengths[i + 1] as Uint16Array)[j] as number) >= ((lengths[i] as Uint16Array)[j + 1] as number)
    ) {
      out.push({ kind: 'removed', text: a[i++] as string });
    } else {
      out.push({ kind: 'added', text: b[j++] as string });
    }
  }
  while (i < a.length) out.push({ kind: 'removed', text: a[i++] as string });
  while (j < b.length) out.push({ kind: 'added', text: b[j++] as string });
  return out;
}
