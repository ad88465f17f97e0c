import type { OutcomeTotals } from '../attacks/outcome.js';
import { ATTACK_OUTCOMES, type AttackOutcome } from '../models/vocabulary.js';
import { html, type SafeHtml } from './html.js';

/**
 * Each attack's outcomes across the runs compared, as a picture: one row per attack, one bar per run whose
 * segments are the shares of success, failure, undetermined and error (counts written on them), so a
 * change between two runs shows as a change of colour. SVG drawn here with no script and no style
 * attribute, like the heatmaps (library-html.ts).
 */

export interface ComparedAttack {
  attack: string;
  control: boolean;
  /** One entry per run compared, in the order of the labels; undefined when the run has no such attack. */
  runs: ReadonlyArray<OutcomeTotals | undefined>;
}

const LABEL_WIDTH = 230;
const RUN_LABEL_WIDTH = 54;
const BAR_WIDTH = 560;
const BAR_HEIGHT = 18;
const ROW_GAP = 10;
const HEADER_HEIGHT = 30;

/** The colour of each outcome, as in the badges. */
export const OUTCOME_COLOURS: Readonly<Record<AttackOutcome, string>> = {
  success: '#cf222e',
  failure: '#1a7f37',
  undetermined: '#9a6700',
  error: '#6e7781',
};

export function outcomeBarsSvg(attacks: readonly ComparedAttack[], runLabels: readonly string[]): SafeHtml {
  const perAttack = runLabels.length * BAR_HEIGHT + ROW_GAP;
  const width = LABEL_WIDTH + RUN_LABEL_WIDTH + BAR_WIDTH + 20;
  const height = HEADER_HEIGHT + attacks.length * perAttack + 10;
  const legend = ATTACK_OUTCOMES.map(
    (outcome, index) =>
      html`<rect x="${LABEL_WIDTH + RUN_LABEL_WIDTH + index * 120}" y="6" width="12" height="12" fill="${OUTCOME_COLOURS[outcome]}"/><text x="${LABEL_WIDTH + RUN_LABEL_WIDTH + index * 120 + 17}" y="16" font-size="12" fill="#1b1f24">${outcome}</text>`,
  );
  const rows = attacks.map((entry, index) => {
    const top = HEADER_HEIGHT + index * perAttack;
    const bars = entry.runs.map((totals, runIndex) =>
      barSvg(totals, top + runIndex * BAR_HEIGHT, runLabels[runIndex] ?? '', entry.attack),
    );
    return html`<text x="${LABEL_WIDTH - 8}" y="${top + (runLabels.length * BAR_HEIGHT) / 2 + 4}" text-anchor="end" font-size="12" fill="#1b1f24">${entry.attack}${entry.control ? ' (control)' : ''}</text>${bars}`;
  });
  return html`<figure class="comparison"><svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="Outcomes of each attack in each run compared" font-family="system-ui, sans-serif">
<title>Outcomes of each attack in each run compared</title>
${legend}${rows}
</svg><figcaption>Each attack's attempts by outcome, one bar per run (${runLabels.join(', ')}).</figcaption></figure>`;
}

function barSvg(totals: OutcomeTotals | undefined, y: number, runLabel: string, attack: string): SafeHtml {
  const x0 = LABEL_WIDTH + RUN_LABEL_WIDTH;
  const label = html`<text x="${LABEL_WIDTH + RUN_LABEL_WIDTH - 6}" y="${y + 13}" text-anchor="end" font-size="11" fill="#57606a">${runLabel}</text>`;
  if (totals === undefined || totals.attempts === 0) {
    return html`${label}<rect x="${x0}" y="${y + 2}" width="${BAR_WIDTH}" height="${BAR_HEIGHT - 4}" fill="#f6f8fa" stroke="#d0d7de"/><text x="${x0 + 8}" y="${y + 13}" font-size="11" fill="#57606a">${totals === undefined ? 'not in this run' : 'no attempt stored'}</text>`;
  }
  let x = x0;
  const segments = ATTACK_OUTCOMES.flatMap((outcome) => {
    const count = totals[outcome];
    if (count === 0) return [];
    const width = (count / totals.attempts) * BAR_WIDTH;
    const segment = html`<rect x="${x.toFixed(1)}" y="${y + 2}" width="${width.toFixed(1)}" height="${BAR_HEIGHT - 4}" fill="${OUTCOME_COLOURS[outcome]}"><title>${attack}, ${runLabel}: ${count} ${outcome}</title></rect>${
      width >= 26
        ? html`<text x="${(x + width / 2).toFixed(1)}" y="${y + 13}" text-anchor="middle" font-size="11" font-weight="600" fill="#ffffff">${count}</text>`
        : ''
    }`;
    x += width;
    return [segment];
  });
  return html`${label}${segments}`;
}
