import type { AttemptRecord } from '../models/attempt-record.js';
import { diffLines } from '../text/line-diff.js';
import { html, type SafeHtml, text } from './html.js';

/**
 * A round of an adaptive attack (SPEC §15), as the report's card and the viewer's attempt page show it:
 * which round of how many, where the text was planted, and the text itself — in full for round 1 (as the
 * campaign wrote it), as a line diff from the round before after that (as the attacker rewrote it), so a
 * reader sees what the attacker changed rather than rereading the whole text.
 */
export interface AdaptationContext {
  /** The injection text of the round before, when it is at hand. */
  previousInjection?: string | undefined;
  /** Rounds the chain ran (shown as "round N of M"), when known. */
  rounds?: number | undefined;
  /** Links to every round of the chain (the viewer's), shown below the text. */
  roundLinks?: SafeHtml | undefined;
  /** Code points of injection text shown. */
  textChars: number;
}

export function adaptationHtml(record: AttemptRecord, context: AdaptationContext): SafeHtml | '' {
  const adaptation = record.adaptation;
  if (adaptation === undefined || record.chain === undefined) return '';
  const round = record.round ?? 1;
  const previous = round === 1 ? undefined : context.previousInjection;
  const shown = { maxChars: context.textChars, multiline: true };
  const body =
    previous === undefined
      ? html`<pre class="injection">${text(adaptation.injection, shown)}</pre>`
      : html`<pre class="diff">${diffLines(previous, adaptation.injection).map(
          (line) =>
            html`<span class="${line.kind}">${line.kind === 'added' ? '+' : line.kind === 'removed' ? '-' : ' '} ${text(line.text, { maxChars: 2_000 })}</span>
`,
        )}</pre>`;
  const how =
    round === 1
      ? ' as the campaign wrote it'
      : previous === undefined
        ? ' as the attacker rewrote it'
        : ' as the attacker rewrote it (changes from the round before)';
  return html`<section class="adaptation"><h2>Round ${round}${context.rounds === undefined ? '' : ` of ${context.rounds}`} <small>adaptive attack</small></h2>
<p class="meta">Planted in <code>${text(adaptation.plant, { maxChars: 300 })}</code>${how}${
    adaptation.attacker.length === 0
      ? ''
      : ` · ${adaptation.attacker.length} exchange(s) with the attacker model`
  }${adaptation.injectionTruncated ? ' · the text is cut short here' : ''}</p>
${body}
${context.roundLinks === undefined ? '' : html`<p class="meta">Rounds: ${context.roundLinks}</p>`}</section>`;
}
