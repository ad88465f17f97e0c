import type { AttemptKey } from '../../memory/run-queries.js';
import { adaptationHtml } from '../../render/adaptation-html.js';
import { attemptBodyHtml, attemptMetaHtml } from '../../render/attempt-html.js';
import { DEFAULT_EVIDENCE_LIMITS } from '../../render/evidence-html.js';
import { badge } from '../../render/fragments.js';
import { html, type SafeHtml, text } from '../../render/html.js';
import type { AttemptView } from '../read-model.js';
import { attemptUrl, runUrl } from './fragments.js';

/** Code points of a prompt, reply, rationale or error shown (the rest is counted, not printed). */
const MAX_TEXT = 4_000;

/**
 * One attempt, as the report's card shows it (src/render/attempt-html.ts), under links to its run and to
 * the attempts before and after it.
 */
export function renderAttemptBody(view: AttemptView): SafeHtml {
  const { run, record } = view;
  const link = (key: AttemptKey | undefined, label: string, rel: string) =>
    key === undefined
      ? html`<span class="muted">${label}</span>`
      : html`<a href="${attemptUrl(run.runId, key.attack, key.attempt, key.round)}" rel="${rel}">${label}</a>`;
  return html`<p class="crumbs"><a href="/">Runs</a> / <a href="${runUrl(run.runId)}">${text(run.campaign, { maxChars: 80 })} <code class="id">${run.runId}</code></a> / ${record.attack} #${record.attempt}${record.round === undefined ? '' : ` round ${record.round}`} · ${link(view.previous, '← previous', 'prev')} · ${link(view.next, 'next →', 'next')}</p>
${attemptMetaHtml(record, view.control)}
${roundHtml(view)}
${attemptBodyHtml(record, { control: view.control, limits: DEFAULT_EVIDENCE_LIMITS, textChars: MAX_TEXT })}`;
}

/** A round of an adaptive attack's chain: its text (a diff from the round before) and links to every round. */
function roundHtml(view: AttemptView): SafeHtml | '' {
  const { record, run } = view;
  if (record.chain === undefined || view.rounds === undefined) return '';
  return adaptationHtml(record, {
    previousInjection: view.previousInjection,
    rounds: view.rounds.length,
    roundLinks: html`${view.rounds.map(
      (entry) =>
        html`<a href="${attemptUrl(run.runId, entry.attack, entry.attempt, entry.round)}">${badge(entry.outcome)} ${entry.round}</a> `,
    )}`,
    textChars: MAX_TEXT,
  });
}
