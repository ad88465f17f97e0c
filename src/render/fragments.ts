import { formatSuccessRate, formatUtility, type OutcomeTotals } from '../attacks/outcome.js';
import type { ComponentIdentifier } from '../models/identifier.js';
import type { Matcher } from '../models/matcher.js';
import { ATTACK_OUTCOMES, type AttackOutcome } from '../models/vocabulary.js';
import {
  conditionPhrase,
  criterionPhrase,
  type DescribedCondition,
  type Phrase,
} from '../verdicts/describe-criterion.js';
import { describeTarget, type OutcomeLabel } from './attempt-words.js';
import { html, quoted, type SafeHtml, text } from './html.js';

/**
 * HTML pieces the report and the viewer share, each the HTML form of one concept's plain-text renderer
 * (attempt-words.ts, describe-criterion.ts), so a page and the terminal say the same thing.
 */

/** An outcome as a coloured label, in the terminal's words: `SUCCESS`, `CONTROL_TRIPPED`. */
export function badge(label: OutcomeLabel | AttackOutcome): SafeHtml {
  const tone = label === 'control_tripped' ? 'success' : label === 'control_clean' ? 'failure' : label;
  return html`<span class="badge ${tone}">${label}</span>`;
}

/** One cell per outcome, in the vocabulary's order; a nonzero count is coloured. */
export function outcomeCells(totals: Readonly<Record<AttackOutcome, number>>): SafeHtml {
  return html`${ATTACK_OUTCOMES.map((outcome) => html`<td class="num ${totals[outcome] > 0 ? outcome : ''}">${totals[outcome]}</td>`)}`;
}

export const OUTCOME_HEADERS = html`${ATTACK_OUTCOMES.map((outcome) => html`<th class="num">${outcome}</th>`)}`;

/** "4/6 decided (66.7%); 2 undetermined (50%–75% if decided)". */
export function successRate(totals: OutcomeTotals): SafeHtml {
  return html`<span class="rate">${formatSuccessRate(totals)}</span>`;
}

/** "8/8 decided (100%); without attack (controls) 2/2 decided (100%)", or a muted "no user task" (SPEC §16). */
export function utilityRate(totals: OutcomeTotals): SafeHtml {
  const words = formatUtility(totals);
  return words === ''
    ? html`<span class="muted">no user task</span>`
    : html`<span class="rate utility">${words}</span>`;
}

/** A criterion or condition: its words, each value it quotes set apart as code. */
export function phraseHtml(phrase: Phrase): SafeHtml {
  return html`${phrase.map((part) => {
    if (typeof part === 'string') return part;
    const shown = { maxChars: part.maxChars, countOmitted: false };
    return html`<code class="value">${part.quoted ? quoted(part.value, shown) : text(part.value, shown)}</code>`;
  })}`;
}

export function conditionHtml(condition: DescribedCondition | undefined): SafeHtml {
  return condition === undefined
    ? html`<span class="muted">no condition</span>`
    : html`<span class="criterion">${phraseHtml(conditionPhrase(condition))}</span>`;
}

export function criterionHtml(matcher: Matcher | undefined): SafeHtml {
  return html`<span class="criterion">${phraseHtml(criterionPhrase(matcher))}</span>`;
}

/**
 * The target's description as code that wraps at its own structure (after `(` and `, `), so a narrow
 * column breaks `MockPlanner(mode=guarded)` between parts, never inside a word.
 */
export function targetHtml(target: ComponentIdentifier): SafeHtml {
  const pieces = describeTarget(target).split(/(?<=\(|, )/);
  return html`<code class="target">${pieces.map((piece, index) => (index === 0 ? piece : html`<wbr>${piece}`))}</code>`;
}

/** A UTC timestamp, to the second. */
export function when(timestamp: string): SafeHtml {
  return html`<time datetime="${timestamp}">${timestamp.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}</time>`;
}
