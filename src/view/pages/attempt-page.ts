import { adaptationHtml } from '../../render/adaptation-html.js';
import { attemptBodyHtml, attemptMetaHtml } from '../../render/attempt-html.js';
import { DEFAULT_EVIDENCE_LIMITS } from '../../render/evidence-html.js';
import { badge } from '../../render/fragments.js';
import { html, type SafeHtml, text } from '../../render/html.js';
import type { AttemptView, RunView } from '../read-model.js';
import { attemptUrl, runUrl } from './fragments.js';

/** Code points of a prompt, reply, rationale or error shown (the rest is counted, not printed). */
const MAX_TEXT = 4_000;

/**
 * One attempt, as the report's card shows it (src/render/attempt-html.ts), under links to its run and to
 * the attempts before and after it.
 */
export function renderAttemptBody(view: RunView, attempt: AttemptView): SafeHtml {
  const record = attempt.record;
  const index = view.attempts.indexOf(attempt);
  const previous = view.attempts[index - 1];
  const next = view.attempts[index + 1];
  const link = (entry: AttemptView | undefined, label: string, rel: string) =>
    entry === undefined
      ? html`<span class="muted">${label}</span>`
      : html`<a href="${attemptUrl(view.run.runId, entry.record.attack, entry.record.attempt, entry.record.round)}" rel="${rel}">${label}</a>`;
  return html`<p class="crumbs"><a href="/">Runs</a> / <a href="${runUrl(view.run.runId)}">${text(view.run.campaign, { maxChars: 80 })} <code class="id">${view.run.runId}</code></a> / ${record.attack} #${record.attempt}${record.round === undefined ? '' : ` round ${record.round}`} · ${link(previous, '← previous', 'prev')} · ${link(next, 'next →', 'next')}</p>
${attemptMetaHtml(record, attempt.control)}
${roundHtml(view, attempt)}
${attemptBodyHtml(record, { control: attempt.control, limits: DEFAULT_EVIDENCE_LIMITS, textChars: MAX_TEXT })}`;
}

/** A round of an adaptive attack's chain: its text (a diff from the round before) and links to every round. */
function roundHtml(view: RunView, attempt: AttemptView): SafeHtml | '' {
  const { record } = attempt;
  if (record.chain === undefined) return '';
  const rounds = view.attempts.filter((entry) => entry.record.chain === record.chain);
  const previous = rounds.find((entry) => entry.record.round === (record.round ?? 1) - 1);
  return adaptationHtml(record, {
    previousInjection: previous?.record.adaptation?.injection,
    rounds: rounds.length,
    roundLinks: html`${rounds.map(
      (entry) =>
        html`<a href="${attemptUrl(view.run.runId, entry.record.attack, entry.record.attempt, entry.record.round)}">${badge(entry.record.outcome)} ${entry.record.round ?? 1}</a> `,
    )}`,
    textChars: MAX_TEXT,
  });
}
