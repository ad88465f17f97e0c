import { type AttemptOutcome, attemptLabel, outcomeTotalsOf, taskLabel } from '../attacks/outcome.js';
import type { AttemptRecord } from '../models/attempt-record.js';
import { adaptationHtml } from './adaptation-html.js';
import { type AttemptHtmlOptions, attemptBodyHtml, attemptMetaHtml } from './attempt-html.js';
import { DEFAULT_EVIDENCE_LIMITS } from './evidence-html.js';
import { badge, when } from './fragments.js';
import { html, SafeHtml, text, urlPart } from './html.js';
import { type CompactAttempt, type ReportRun, roundKey } from './report-run.js';
import { runMetaHtml, runSummaryHtml } from './run-summary-html.js';
import { STYLESHEET } from './styles.js';

/**
 * Renders campaign runs as one self-contained HTML file: the shared stylesheet inline, no script, no
 * external resource, and a Content-Security-Policy that forbids loading anything, so viewing it needs no
 * network and attacker text in it cannot run. It is built with the viewer's escaping template
 * (src/render/html.ts) and the same fragments, so a run reads the same in both.
 *
 * Per run: the summary (counts, rates, controls, library heatmaps, gaps: from counts, whatever the run's
 * size), full cards for the attempts a person must read (successes, undetermined, errors, tripped
 * controls; at most a stated number of each), then the other attempts one line each up to a bound. What a
 * bound left out is counted, with where to see it (the viewer, filtered). Its size grows with what needs
 * reading, not with the run.
 */

export type { ReportRun } from './report-run.js';

export interface RenderReportOptions {
  generatedAt?: string | undefined;
  /** Code points of a prompt, reply, rationale or error shown on a card. Default 2,000. */
  maxTextChars?: number | undefined;
  /** Code points of retained file content shown per entry. Default 600. */
  maxContentChars?: number | undefined;
}

export function renderReportHtml(runs: readonly ReportRun[], options: RenderReportOptions = {}): string {
  const generatedAt = options.generatedAt ?? new Date().toISOString();
  const card: AttemptHtmlOptions = {
    control: false,
    textChars: options.maxTextChars ?? 2_000,
    limits: { ...DEFAULT_EVIDENCE_LIMITS, contentChars: options.maxContentChars ?? 600 },
  };
  const sum = (outcome: AttemptOutcome) =>
    runs.reduce((total, entry) => total + entry.summary.totals[outcome], 0);
  const all = outcomeTotalsOf({
    success: sum('success'),
    failure: sum('failure'),
    undetermined: sum('undetermined'),
    error: sum('error'),
  });
  const controls = runs.reduce((total, entry) => total + entry.summary.controls.attempts, 0);
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Witness report</title>
<style>${new SafeHtml(STYLESHEET)}</style></head>
<body><main>
<header class="report"><h1>Witness report</h1>
<p class="lead">Verdicts come from what the agent did to its workspace, read after each attempt, not from what it replied. Generated ${generatedAt}.</p>
<p class="totals">${all.attempts} attack attempt${all.attempts === 1 ? '' : 's'}: ${all.success} success, ${all.failure} failure, ${all.undetermined} undetermined, ${all.error} error${controls === 0 ? '' : html`; ${controls} control attempt${controls === 1 ? '' : 's'} apart`}. Undetermined attempts are shown apart and never counted as failures.</p></header>
${runs.length === 0 ? html`<p class="empty">No campaign runs are stored.</p>` : runs.map((entry) => runSection(entry, card))}
</main></body></html>
`.value;
}

function runSection(entry: ReportRun, card: AttemptHtmlOptions): SafeHtml {
  const { summary } = entry;
  const run = summary.run;
  const viewerFilter = (query: string) =>
    `witness view → run ${run.runId} → /runs/${urlPart(run.runId)}?${query}`;
  return html`<section class="run" id="${anchor(run.runId)}">
<h2>${text(run.campaign, { maxChars: 120 })} <small>run <code class="id">${run.runId}</code></small></h2>
${runMetaHtml(summary)}
${runSummaryHtml(summary)}
<h2 id="${anchor(run.runId, 'read')}">Attempts to read <small>(successes, undetermined, errors and tripped controls, in full)</small></h2>
${entry.cards.length === 0 ? html`<p class="muted">None: every attempt was decided false, or none is stored.</p>` : entry.cards.map((record) => attemptCard(record, entry, card))}
${omittedNote(entry, viewerFilter)}
${compactSection(entry, viewerFilter)}
</section>`;
}

function attemptCard(record: AttemptRecord, entry: ReportRun, options: AttemptHtmlOptions): SafeHtml {
  const control =
    record.control === true || entry.summary.attacks.some((a) => a.id === record.attack && a.control);
  return html`<article class="attempt ${record.outcome}${control ? ' control' : ''}" id="${anchor(record.runId, record.attack, String(record.attempt), ...(record.round === undefined ? [] : [`round${record.round}`]))}">
<h3>${text(record.attack, { maxChars: 200 })} · attempt ${record.attempt}${record.round === undefined ? '' : ` · round ${record.round} (adaptive)`}</h3>
${attemptMetaHtml(record, control)}
${adaptationHtml(record, { previousInjection: entry.injectionsBefore.get(roundKey(record)), textChars: options.textChars })}
${attemptBodyHtml(record, { ...options, control })}
</article>`;
}

/** How many attempts of each kind a bound left out, and where to read them. */
function omittedNote(entry: ReportRun, viewerFilter: (query: string) => string): SafeHtml | '' {
  const left = entry.cardsOmitted.filter((kind) => kind.count > 0);
  if (left.length === 0) return '';
  return html`<div class="omitted"><p><strong>Left out of this report:</strong> full cards are shown for at most ${entry.bounds.cardsPerOutcome} attempts of each kind.</p><ul>${left.map(
    (kind) => html`<li>${kind.count} more ${kind.label}: <code>${viewerFilter(kind.query)}</code></li>`,
  )}</ul><p class="muted">Or write a report with a higher bound: <code>witness report --run ${entry.summary.run.runId} --max-cards N</code>.</p></div>`;
}

function compactSection(entry: ReportRun, viewerFilter: (query: string) => string): SafeHtml {
  const withTask = entry.compact.some((attempt) => attempt.task !== undefined);
  const rows = entry.compact.map((attempt) => compactRow(attempt, withTask));
  const omitted = entry.compactOmitted;
  return html`<h2>Other attempts <small>(decided false, one line each)</small></h2>
${
  rows.length === 0
    ? html`<p class="muted">None.</p>`
    : html`<table class="compact"><thead><tr><th>attack</th><th class="num">#</th><th>outcome</th><th>file-system verdict</th>${withTask ? html`<th>user task</th>` : ''}<th>finished</th></tr></thead><tbody>${rows}</tbody></table>`
}
${
  omitted === 0
    ? ''
    : html`<div class="omitted"><p><strong>Left out of this report:</strong> ${omitted} more attempts decided false (at most ${entry.bounds.compact} are listed): <code>${viewerFilter('outcome=failure')}</code></p></div>`
}`;
}

function compactRow(attempt: CompactAttempt, withTask: boolean): SafeHtml {
  const task = !withTask
    ? ''
    : attempt.task === undefined
      ? html`<td class="muted">none</td>`
      : html`<td class="task ${attempt.task.outcome}">${taskLabel(attempt.task.outcome)}</td>`;
  return html`<tr><td>${text(attempt.attack, { maxChars: 200 })}</td><td class="num">${attempt.attempt}${attempt.round === undefined ? '' : ` · round ${attempt.round}`}</td><td>${badge(attemptLabel(attempt))}</td><td>${attempt.verdict}</td>${task}<td>${when(attempt.finishedAt)}</td></tr>`;
}

/** An id for an anchor: only characters that need no escaping in a fragment. */
function anchor(...parts: string[]): string {
  return `r-${parts.join('-')}`.replace(/[^A-Za-z0-9_-]/g, '_');
}
