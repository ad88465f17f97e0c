import { attemptLabel, taskLabel } from '../attacks/outcome.js';
import type { AttemptRecord } from '../models/attempt-record.js';
import { conditionPhrase } from '../verdicts/describe-criterion.js';
import { containmentMeaning, containmentWord, verdictText } from './attempt-words.js';
import {
  changesHtml,
  cleanupHtml,
  type EvidenceLimits,
  observationHtml,
  transcriptHtml,
} from './evidence-html.js';
import { badge, conditionHtml, phraseHtml, targetHtml, when } from './fragments.js';
import { html, type SafeHtml, text } from './html.js';
import { networkHtml } from './network-html.js';

/**
 * One attempt in full, as the report's card and the viewer's attempt page both show it: the prompt; the
 * agent's claim (its reply) beside what the file system shows (the verdict, the condition in words, the
 * objective, the rationale, the error); the evidence; what the agent changed; what it sent over the network;
 * the tool calls; the record.
 * The report wraps it in a card, the viewer in a page with links to the neighbouring attempts.
 */

export interface AttemptHtmlOptions {
  /** A benign control attempt (`control: true`). */
  control: boolean;
  limits: EvidenceLimits;
  /** Code points of a prompt or reply shown. */
  textChars: number;
}

export function attemptMetaHtml(record: AttemptRecord, control: boolean): SafeHtml {
  const condition = record.expectation.conditions[0] as { surface?: string } | undefined;
  return html`<p class="meta">${badge(attemptLabel({ outcome: record.outcome, control }))}${control ? html` <span class="pill">control</span>` : ''} Target ${targetHtml(record.target)} · surface ${condition?.surface ?? 'workspace'} · containment ${
    record.containment === undefined
      ? html`<span class="muted">not recorded</span>`
      : html`<span title="${containmentMeaning(record.containment)}">${containmentWord(record.containment)}</span>`
  } · ${when(record.startedAt)} → ${when(record.finishedAt)}</p>
${shownPathsHtml(record.shownPaths)}`;
}

/** What of the host the sandbox showed the agent, read-only (SPEC §13), beside its containment. */
function shownPathsHtml(shown: readonly string[] | undefined): SafeHtml | '' {
  if (shown === undefined) return '';
  return html`<p class="meta">Host paths shown read-only: the system directories${shown.map((path) => html`, <code>${text(path, { maxChars: 300 })}</code>`)}</p>`;
}

export function attemptBodyHtml(record: AttemptRecord, options: AttemptHtmlOptions): SafeHtml {
  const { limits } = options;
  const score = record.score;
  const expectation = score?.scoredExpectation ?? record.expectation;
  const blocks = { maxChars: options.textChars, multiline: true };
  return html`<section class="prompt"><h2>Prompt</h2><pre>${text(record.prompt, blocks)}</pre></section>
<section class="sides">
<div class="side claim"><h2>The agent's claim <small>(its reply)</small></h2>${
    record.reply === null ? html`<p><em>no reply</em></p>` : html`<pre>${text(record.reply, blocks)}</pre>`
  }</div>
<div class="side verdict ${record.outcome}"><h2>What the file system shows</h2>
<p class="verdict-word">${verdictText(score)}</p>
${expectation.conditions.map((condition) => html`<p><strong>Succeeds when</strong> ${conditionHtml(condition)}</p>`)}
${expectation.objective === undefined ? '' : html`<p><strong>Objective</strong> ${text(expectation.objective, { maxChars: 600 })}</p>`}
<p><strong>Rationale</strong> <span class="rationale">${score === null ? html`<em>none</em>` : text(score.rationale, { maxChars: options.textChars })}</span></p>
${record.error === null ? '' : html`<p class="error"><strong>Error</strong> ${text(record.error, { maxChars: options.textChars })}</p>`}
${targetErrorHtml(record, options)}
${taskHtml(record, options)}
</div></section>
<section class="evidence"><h2>Evidence</h2>${
    record.observations.length === 0
      ? html`<p><em>No observation was made.</em></p>`
      : record.observations.map((observation) => observationHtml(observation, limits))
  }</section>
${changesHtml(record.changes, record.expectation.conditions[0], limits)}
${networkHtml(record.network, limits)}
<section class="transcript"><h2>Tool calls</h2>${transcriptHtml(record.transcript, limits)}</section>
<section class="ids"><h2>Record</h2><dl>
<dt>score</dt><dd><code>${score?.id ?? 'none'}</code></dd>
<dt>conversation</dt><dd><code>${record.conversationId ?? 'none'}</code></dd>
<dt>workspace</dt><dd>${record.workspace === null ? html`<span class="muted">none</span>` : html`<code>${text(record.workspace.root, { maxChars: limits.lineChars })}</code>${record.workspace.kept ? ' (kept)' : ' (removed)'}`}</dd>
</dl>${cleanupHtml(record.cleanup, limits)}</section>`;
}

/**
 * How the agent failed (SPEC §13), beside the verdict it did not change: the kind, the exit status or
 * signal, the cause (the message; its first line names it) and the tail of its stderr.
 */
function targetErrorHtml(record: AttemptRecord, options: AttemptHtmlOptions): SafeHtml | '' {
  const failure = record.targetError;
  if (failure === undefined) return '';
  const how = [
    failure.kind,
    ...(failure.exitCode === null ? [] : [`exit status ${failure.exitCode}`]),
    ...(failure.signal === null ? [] : [`signal ${failure.signal}`]),
  ].join(', ');
  const stands =
    record.outcome === 'error'
      ? ''
      : html` <span class="muted">(the verdict stands: it follows the evidence)</span>`;
  return html`<div class="target-error"><p class="error"><strong>The agent failed</strong> (${how})${stands}${
    failure.message === record.error
      ? ''
      : html`: ${text(failure.message, { maxChars: options.textChars, multiline: true })}`
  }</p>${
    failure.stderrTail === null || failure.stderrTail === ''
      ? ''
      : html`<p class="muted">Its stderr ended:</p><pre>${text(failure.stderrTail, { maxChars: options.textChars, multiline: true })}</pre>`
  }</div>`;
}

/** The user's task (SPEC §16): done or not, by which condition, and why — judged from the same evidence. */
function taskHtml(record: AttemptRecord, options: AttemptHtmlOptions): SafeHtml | '' {
  const task = record.task;
  if (task === undefined) return '';
  return html`<p class="task ${task.outcome}"><strong>User task</strong> <span class="task-word">${taskLabel(task.outcome)}</span> — <span class="task-criterion">${task.expectation.conditions[0] === undefined ? 'no condition' : phraseHtml(conditionPhrase(task.expectation.conditions[0]))}</span><br><span class="rationale">${text(task.rationale, { maxChars: options.textChars })}</span></p>`;
}
