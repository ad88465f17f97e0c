import type { Observation } from '../../models/observation.js';
import { GAP_EXPLANATIONS, type GapReason } from '../../models/vocabulary.js';
import { html, type SafeHtml, text } from '../../render/html.js';
import type { TranscriptEvent } from '../../targets/transcript.js';
import { diffLines } from '../../text/line-diff.js';
import type { AttemptView, ChangeSetView, RunView } from '../read-model.js';
import {
  attemptUrl,
  badge,
  describeCriterion,
  describeTarget,
  runUrl,
  taskVerdict,
  when,
} from './fragments.js';

/** How much of any one agent-controlled text is shown (the rest is counted, not printed). */
const MAX_TEXT = 4_000;
const MAX_CONTENT = 1_500;
const MAX_LINE = 300;

/**
 * One attempt: the prompt, the agent's claim beside the file system's verdict, the criterion in words, the
 * evidence (entries with sizes, digests and excerpts; gaps explained), the change set, the tool calls of the
 * transcript and the rationale.
 */
export function renderAttemptBody(view: RunView, attempt: AttemptView): SafeHtml {
  const record = attempt.record;
  const index = view.attempts.indexOf(attempt);
  const previous = view.attempts[index - 1];
  const next = view.attempts[index + 1];
  const score = record.score;
  const verdict =
    score === null
      ? 'no verdict (the workspace was not judged)'
      : score.status === 'undetermined'
        ? 'undetermined: the evidence could not decide'
        : score.value
          ? 'written: the condition holds (true)'
          : 'not written: the condition does not hold (false)';
  const link = (entry: AttemptView | undefined, label: string) =>
    entry === undefined
      ? html`<span class="muted">${label}</span>`
      : html`<a href="${attemptUrl(view.run.runId, entry.record.attack, entry.record.attempt, entry.record.round)}" rel="${label === '← previous' ? 'prev' : 'next'}">${label}</a>`;
  return html`<p class="crumbs"><a href="/">Runs</a> / <a href="${runUrl(view.run.runId)}">${text(view.run.campaign, { maxChars: 80 })} <code class="id">${view.run.runId}</code></a> / ${record.attack} #${record.attempt} · ${link(previous, '← previous')} · ${link(next, 'next →')}</p>
<p class="meta">${badge(record.outcome)}${attempt.control ? html` <span class="pill">control</span>` : ''} Target <code>${describeTarget(view.run)}</code> · surface ${attempt.surface} · containment ${attempt.containment ?? html`<span class="muted">not recorded</span>`} · ${when(record.startedAt)} → ${when(record.finishedAt)}</p>
<section class="prompt"><h2>Prompt</h2><pre>${text(record.prompt, { maxChars: MAX_TEXT, multiline: true })}</pre></section>
<section class="sides">
<div class="side claim"><h2>The agent's claim <small>(its reply)</small></h2>${
    record.reply === null
      ? html`<p><em>no reply</em></p>`
      : html`<pre>${text(record.reply, { maxChars: MAX_TEXT, multiline: true })}</pre>`
  }</div>
<div class="side verdict ${record.outcome}"><h2>What the file system shows</h2>
<p class="verdict-word">${verdict}</p>
<p><strong>Succeeds when</strong> <span class="criterion">${describeCriterion(record.expectation.conditions[0])}</span></p>
${record.expectation.objective === undefined ? '' : html`<p><strong>Objective</strong> ${text(record.expectation.objective, { maxChars: 400 })}</p>`}
<p><strong>Rationale</strong> <span class="rationale">${score === null ? html`<em>none</em>` : text(score.rationale, { maxChars: MAX_TEXT, alreadyQuoted: true })}</span></p>
${record.error === null ? '' : html`<p class="error"><strong>Error</strong> ${text(record.error, { maxChars: MAX_TEXT })}</p>`}
${record.task === undefined ? '' : taskVerdict(record.task)}
</div></section>
${renderAdaptation(view, attempt)}
<section class="evidence"><h2>Evidence</h2>${
    record.observations.length === 0
      ? html`<p><em>No observation was made.</em></p>`
      : record.observations.map(renderObservation)
  }</section>
${attempt.changeSets.map(renderChangeSet)}
<section class="transcript"><h2>Tool calls</h2>${renderTranscript(record.transcript)}</section>
<section class="ids"><h2>Record</h2><dl>
<dt>score</dt><dd><code>${score?.id ?? 'none'}</code></dd>
<dt>conversation</dt><dd><code>${record.conversationId ?? 'none'}</code></dd>
<dt>workspace</dt><dd>${record.workspace === null ? html`<span class="muted">none</span>` : html`<code>${text(record.workspace.root, { maxChars: MAX_LINE })}</code>${record.workspace.kept ? ' (kept)' : ' (removed)'}`}</dd>
${
  record.cleanup === undefined || record.cleanup.removed
    ? ''
    : html`<dt>cleanup</dt><dd class="error">not everything was removed: <ul>${record.cleanup.failures.map(
        (failure) =>
          html`<li><code>${text(failure.path, { maxChars: MAX_LINE })}</code>: ${text(failure.reason, { maxChars: MAX_LINE })}</li>`,
      )}</ul>${record.cleanup.unlistedFailures > 0 ? html`and ${record.cleanup.unlistedFailures} more not listed` : ''}</dd>`
}
</dl></section>`;
}

function renderObservation(observation: Observation): SafeHtml {
  const { payload } = observation;
  const rows = payload.entries.map(
    (entry) => html`<tr>
<td><code>${text(entry.uri, { maxChars: MAX_LINE })}</code></td>
<td class="num">${entry.sizeBytes}</td>
<td><code class="digest">${entry.sha256 ?? 'not read in full'}</code></td>
<td>${entry.content === null ? html`<em>not UTF-8 text</em>` : html`<pre>${text(entry.content, { maxChars: MAX_CONTENT, multiline: true })}</pre>`}${
      entry.contentTruncated ? html`<p class="note">content retained only in part</p>` : ''
    }</td></tr>`,
  );
  const gaps = payload.coverage.gaps.map(
    (gap) =>
      html`<li><code class="gap">${gap.reason}</code>${gap.uri === undefined ? '' : html` at <code>${text(gap.uri, { maxChars: MAX_LINE })}</code>`}: ${GAP_EXPLANATIONS[gap.reason as GapReason] ?? ''}${
        gap.detail === undefined ? '' : html` (${text(gap.detail, { maxChars: MAX_LINE })})`
      }</li>`,
  );
  return html`<div class="observation">
<p>Read of <code>${text(payload.scope.uri, { maxChars: MAX_LINE })}</code> (${payload.scope.match}) · acquisition <strong>${observation.acquisition}</strong> · ${payload.entries.length} ${payload.entries.length === 1 ? 'entry' : 'entries'} · observation <code class="id">${observation.id}</code></p>
${rows.length === 0 ? html`<p>No file exists there.</p>` : html`<table class="entries"><thead><tr><th>uri</th><th class="num">bytes</th><th>sha256</th><th>content (excerpt)</th></tr></thead><tbody>${rows}</tbody></table>`}
${gaps.length === 0 ? '' : html`<p>Gaps (why the read is incomplete):</p><ul class="gaps">${gaps}</ul>`}
</div>`;
}

function renderChangeSet(changeSet: ChangeSetView): SafeHtml {
  const total = changeSet.groups.reduce((sum, group) => sum + group.entries.length, 0);
  const line = (uri: string) => html`<code>${text(uri, { maxChars: MAX_LINE })}</code>`;
  return html`<section class="changes"><h2>What the agent changed <small>(${changeSet.surface}: ${total} ${total === 1 ? 'change' : 'changes'})</small></h2>
${changeSet.error === null ? '' : html`<p class="note">${text(changeSet.error, { maxChars: MAX_LINE })}</p>`}
${changeSet.complete === false ? html`<p class="note">Incomplete: a manifest could not be read in full, so changes beneath its gaps may be missing.</p>` : ''}
${total === 0 && changeSet.complete !== null ? html`<p>No change.</p>` : ''}
${changeSet.groups
  .filter((group) => group.entries.length > 0)
  .map(
    (group) =>
      html`<h3>${group.kind.replace('_', ' ')} (${group.entries.length})</h3><ul class="change-list">${group.entries.map(
        (entry) =>
          html`<li>${line(entry.uri)}${entry.detail === '' ? '' : html` <span class="muted">${text(entry.detail, { maxChars: MAX_LINE })}</span>`}</li>`,
      )}</ul>`,
  )}
${changeSet.undecided.length === 0 ? '' : html`<h3>undecided (${changeSet.undecided.length})</h3><ul class="change-list">${changeSet.undecided.map((uri) => html`<li>${line(uri)}</li>`)}</ul>`}
${changeSet.gaps.length === 0 ? '' : html`<ul class="gaps">${changeSet.gaps.map((gap) => html`<li><code class="gap">${gap.reason}</code>${gap.uri === null ? '' : html` at ${line(gap.uri)}`}: ${GAP_EXPLANATIONS[gap.reason as GapReason] ?? ''}</li>`)}</ul>`}
</section>`;
}

function renderTranscript(events: readonly TranscriptEvent[]): SafeHtml {
  const items = events.flatMap((event) => {
    switch (event.kind) {
      case 'tool_call':
        return [
          html`<li class="call"><code class="tool">${text(event.name, { maxChars: 100 })}</code> <code>${text(JSON.stringify(event.arguments), { maxChars: MAX_LINE })}</code></li>`,
        ];
      case 'tool_result':
        return [
          html`<li class="result ${event.ok ? 'ok' : 'refused'}">→ ${event.ok ? 'ok' : 'refused'}: ${text(event.text, { maxChars: MAX_LINE })}</li>`,
        ];
      case 'process':
        return [
          html`<li class="call">process <code>${text([event.command, ...event.args].join(' '), { maxChars: MAX_LINE })}</code> → exit ${event.exitCode ?? event.signal ?? '?'}${event.timedOut ? ' (timed out)' : ''}</li>`,
        ];
      case 'http_exchange':
        return [
          html`<li class="call">HTTP ${text(event.request.method, { maxChars: 10 })} <code>${text(event.request.url, { maxChars: MAX_LINE })}</code> → ${event.response?.status ?? text(event.error ?? 'no response', { maxChars: MAX_LINE })}</li>`,
        ];
      default:
        return [];
    }
  });
  return items.length === 0
    ? html`<p><em>No tool call was recorded.</em></p>`
    : html`<ol class="tools">${items}</ol>`;
}

/**
 * A round of an adaptive attack (SPEC §15): which round of which chain, the text planted in it (in full
 * for round 1, as a diff from the round before after that) and how many exchanges the attacker had.
 */
function renderAdaptation(view: RunView, attempt: AttemptView): SafeHtml | '' {
  const { record } = attempt;
  const adaptation = record.adaptation;
  if (adaptation === undefined || record.chain === undefined) return '';
  const rounds = view.attempts.filter((entry) => entry.record.chain === record.chain);
  const previous = rounds.find((entry) => entry.record.round === (record.round ?? 1) - 1)?.record.adaptation;
  const body =
    previous === undefined
      ? html`<pre class="injection">${text(adaptation.injection, { maxChars: MAX_TEXT, multiline: true })}</pre>`
      : html`<pre class="diff">${diffLines(previous.injection, adaptation.injection).map(
          (line) =>
            html`<span class="${line.kind}">${line.kind === 'added' ? '+' : line.kind === 'removed' ? '-' : ' '} ${text(line.text, { maxChars: 2_000 })}</span>
`,
        )}</pre>`;
  return html`<section class="adaptation"><h2>Round ${record.round ?? 1} of ${rounds.length} <small>adaptive attack</small></h2>
<p class="meta">Planted in <code>${adaptation.plant}</code>${
    previous === undefined
      ? ' as the campaign wrote it'
      : ' as the attacker rewrote it (changes from the round before)'
  }${adaptation.attacker.length === 0 ? '' : ` · ${adaptation.attacker.length} exchange(s) with the attacker model`}${
    adaptation.injectionTruncated ? ' · the text is cut short here' : ''
  }</p>
${body}
<p class="meta">Rounds: ${rounds.map(
    (entry) =>
      html`<a href="${attemptUrl(view.run.runId, entry.record.attack, entry.record.attempt, entry.record.round)}">${badge(entry.record.outcome)} ${entry.record.round ?? 1}</a> `,
  )}</p></section>`;
}
