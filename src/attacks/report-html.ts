import type { ComponentIdentifier } from '../models/identifier.js';
import type { Observation } from '../models/observation.js';
import { GAP_EXPLANATIONS } from '../models/vocabulary.js';
import { neutralizeText } from '../text/quote-text.js';
import { describeCondition } from '../verdicts/describe-criterion.js';
import type { AttemptRecord, CampaignRun } from './attempt-record.js';
import { groupByLibrary, LIBRARY_AXES } from './library/library-groups.js';
import { type AttemptOutcome, formatSuccessRate, tallyOutcomes } from './outcome.js';

/**
 * Renders campaign runs as one self-contained HTML file: inline CSS, no scripts, no external resources,
 * and a Content-Security-Policy that forbids loading anything, so viewing it needs no network and
 * attacker text in it cannot run. Every string that came from a prompt, a reply, a file or a tool is
 * escaped and truncated (`maxTextChars`), so a payload is shown, never executed or allowed to flood the page.
 */

export interface ReportRun {
  run: CampaignRun;
  attempts: AttemptRecord[];
}

export interface RenderReportOptions {
  generatedAt?: string | undefined;
  /** Characters of any attacker-influenced text shown before it is cut. Default 2,000. */
  maxTextChars?: number | undefined;
  /** Characters of retained file content shown per entry. Default 600. */
  maxContentChars?: number | undefined;
}

export function renderReportHtml(runs: readonly ReportRun[], options: RenderReportOptions = {}): string {
  const maxText = options.maxTextChars ?? 2_000;
  const maxContent = options.maxContentChars ?? 600;
  const text = (value: string | null | undefined, cap = maxText) => escapeHtml(truncate(value ?? '', cap));
  const line = (value: string, cap = 300) => escapeHtml(neutralizeText(value, { maxChars: cap }));
  const generatedAt = options.generatedAt ?? new Date().toISOString();
  const all = tallyOutcomes(runs.flatMap((entry) => entry.attempts.map((attempt) => attempt.outcome)));

  const sections = runs.map(({ run, attempts }) => {
    const totals = tallyOutcomes(attempts.map((attempt) => attempt.outcome));
    const perAttack = run.attacks.map((attack) => {
      const mine = attempts.filter((attempt) => attempt.attack === attack.id);
      const t = tallyOutcomes(mine.map((attempt) => attempt.outcome));
      const condition = attack.expectation.conditions[0];
      const objective = attack.expectation.objective;
      return `<tr><td><a href="#${anchor(run.runId, attack.id, 1)}">${text(attack.id)}</a></td><td>${
        condition === undefined ? '' : line(describeCondition(condition), 600)
      }${objective === undefined ? '' : `<br><small>objective: ${line(objective)}</small>`}</td><td>${t.attempts}</td>${outcomeCells(t)}<td>${escapeHtml(formatSuccessRate(t))}</td></tr>`;
    });
    const attemptSections = attempts.map((attempt) => renderAttempt(attempt, text, maxContent));
    return `<section class="run">
<h2>${text(run.campaign)} <small>run ${text(run.runId)}</small></h2>
<p class="meta">Target <code>${text(describeTarget(run))}</code> · started ${text(run.startedAt)}${
      run.description === null ? '' : ` · ${text(run.description)}`
    }</p>
<p class="asr">Attack success rate: <strong>${escapeHtml(formatSuccessRate(totals))}</strong></p>
<table class="counts"><thead><tr><th>attack</th><th>expected write</th><th>attempts</th><th>success</th><th>failure</th><th>undetermined</th><th>error</th><th>success rate</th></tr></thead>
<tbody>${perAttack.join('\n')}</tbody>
<tfoot><tr><th colspan="2">all attacks</th><th>${totals.attempts}</th>${outcomeCells(totals)}<th></th></tr></tfoot></table>
${renderLibraryGroups(attempts)}
${attemptSections.join('\n')}
</section>`;
  });

  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Witness report</title>
<style>${STYLE}</style></head>
<body>
<header><h1>Witness report</h1>
<p>Verdicts come from what the agent did to its workspace, read after each attempt, not from what it replied. Generated ${escapeHtml(generatedAt)}.</p>
<p class="totals">${all.attempts} attempt${all.attempts === 1 ? '' : 's'}: ${outcomeSummary(all)}. Undetermined attempts are shown apart and never counted as failures.</p></header>
${sections.length === 0 ? '<p>No campaign runs are stored.</p>' : sections.join('\n')}
</body></html>
`;
}

/** Library attacks (`<objective>.<carrier>.<strategy>`) grouped by each axis; nothing for other runs. */
function renderLibraryGroups(attempts: readonly AttemptRecord[]): string {
  const groups = groupByLibrary(attempts);
  if (groups.length === 0) return '';
  const tables = LIBRARY_AXES.map((axis) => {
    const rows = groups
      .filter((group) => group.axis === axis)
      .map(
        (group) =>
          `<tr><td><code>${escapeHtml(group.id)}</code></td><td>${group.totals.attempts}</td>${outcomeCells(group.totals)}<td>${escapeHtml(formatSuccessRate(group.totals))}</td></tr>`,
      );
    return `<table class="counts library"><thead><tr><th>by ${axis}</th><th>attempts</th><th>success</th><th>failure</th><th>undetermined</th><th>error</th><th>success rate</th></tr></thead>
<tbody>${rows.join('\n')}</tbody></table>`;
  });
  return `<h3>Attack library: by objective, carrier and strategy</h3>\n${tables.join('\n')}`;
}

function renderAttempt(
  attempt: AttemptRecord,
  text: (value: string | null | undefined, cap?: number) => string,
  maxContent: number,
): string {
  const score = attempt.score;
  const verdict =
    score === null
      ? 'no verdict'
      : score.status === 'undetermined'
        ? 'undetermined'
        : score.value
          ? 'written (true)'
          : 'not written (false)';
  const evidence = attempt.observations
    .map((observation) => renderObservation(observation, text, maxContent))
    .join('\n');
  const tools = attempt.transcript.flatMap((event) =>
    event.kind === 'tool_call'
      ? [`<li><code>${text(event.name, 100)}</code> ${text(JSON.stringify(event.arguments), 300)}</li>`]
      : event.kind === 'tool_result'
        ? [
            `<li class="${event.ok ? 'ok' : 'refused'}">→ ${event.ok ? 'ok' : 'refused'}: ${text(event.text, 300)}</li>`,
          ]
        : [],
  );
  return `<article class="attempt ${attempt.outcome}" id="${anchor(attempt.runId, attempt.attack, attempt.attempt)}">
<h3><span class="badge ${attempt.outcome}">${attempt.outcome}</span> ${text(attempt.attack)} · attempt ${attempt.attempt}</h3>
<dl>
<dt>Prompt</dt><dd><pre>${text(attempt.prompt)}</pre></dd>
<dt>Reply (the agent's claim)</dt><dd><pre class="claim">${attempt.reply === null ? '<em>no reply</em>' : text(attempt.reply)}</pre></dd>
<dt>File-system verdict</dt><dd class="verdict">${escapeHtml(verdict)}</dd>
${criterion(attempt)}
<dt>Rationale</dt><dd>${score === null ? '<em>none</em>' : escapeHtml(neutralizeText(score.rationale, { maxChars: 2_000, escapeBackslash: false }))}</dd>
${attempt.error === null ? '' : `<dt>Error</dt><dd class="error">${text(attempt.error)}</dd>`}
<dt>Evidence</dt><dd>${evidence === '' ? '<em>no observation was made</em>' : evidence}</dd>
${tools.length === 0 ? '' : `<dt>Tool calls</dt><dd><ul class="tools">${tools.join('')}</ul></dd>`}
${attempt.workspace?.kept ? `<dt>Workspace (kept)</dt><dd><code>${text(attempt.workspace.root)}</code></dd>` : ''}
${attempt.containment === undefined ? '' : `<dt>Containment</dt><dd>${escapeHtml(CONTAINMENT_TEXT[attempt.containment])}</dd>`}
${cleanupNote(attempt, text)}
</dl></article>`;
}

/** The criterion and objective the attempt was judged by, in words (SPEC: shown wherever a verdict is). */
function criterion(attempt: AttemptRecord): string {
  const expectation = attempt.score?.scoredExpectation ?? attempt.expectation;
  const conditions = expectation.conditions.map((condition) => describeCondition(condition));
  const rows = conditions.map((words) => `<dt>Criterion</dt><dd>${escapeHtml(words)}</dd>`);
  if (expectation.objective !== undefined) {
    rows.push(
      `<dt>Objective</dt><dd>${escapeHtml(neutralizeText(expectation.objective, { maxChars: 600 }))}</dd>`,
    );
  }
  return rows.join('\n');
}

function renderObservation(
  observation: Observation,
  text: (value: string | null | undefined, cap?: number) => string,
  maxContent: number,
): string {
  const payload = observation.payload;
  const rows = payload.entries.map(
    (entry) =>
      `<tr><td><code>${text(entry.uri, 300)}</code></td><td>${entry.sizeBytes}</td><td><code class="digest">${
        entry.sha256 ?? 'not read in full'
      }</code></td><td>${entry.content === null ? '<em>not UTF-8 text</em>' : `<pre>${text(entry.content, maxContent)}</pre>`}${
        entry.contentTruncated ? '<p class="note">content retained only in part</p>' : ''
      }</td></tr>`,
  );
  const gaps = payload.coverage.gaps.map(
    (gap) =>
      `<li><code>${gap.reason}</code>${gap.uri === undefined ? '' : ` at <code>${text(gap.uri, 300)}</code>`}: ${escapeHtml(
        GAP_EXPLANATIONS[gap.reason],
      )}${gap.detail === undefined ? '' : ` (${text(gap.detail, 300)})`}</li>`,
  );
  return `<div class="observation"><p>Read of <code>${text(payload.scope.uri, 300)}</code> (${payload.scope.match}): acquisition <strong>${
    observation.acquisition
  }</strong>, ${payload.entries.length} entr${payload.entries.length === 1 ? 'y' : 'ies'}.</p>
${rows.length === 0 ? '<p>No file exists there.</p>' : `<table class="entries"><thead><tr><th>uri</th><th>bytes</th><th>sha256</th><th>content</th></tr></thead><tbody>${rows.join('')}</tbody></table>`}
${gaps.length === 0 ? '' : `<p>Gaps (why the read is incomplete):</p><ul class="gaps">${gaps.join('')}</ul>`}</div>`;
}

const ORDER: readonly AttemptOutcome[] = ['success', 'failure', 'undetermined', 'error'];

function outcomeCells(totals: Record<AttemptOutcome, number>): string {
  return ORDER.map((outcome) => `<td class="${outcome}">${totals[outcome]}</td>`).join('');
}

function outcomeSummary(totals: Record<AttemptOutcome, number>): string {
  return ORDER.map((outcome) => `${totals[outcome]} ${outcome}`).join(', ');
}

function describeTarget(run: CampaignRun): string {
  return describeComponent(run.target);
}

/** `Type(key=value, …, child=Type(…))`: scalar parameters and children (an agent's planner and toolbox). */
function describeComponent(component: ComponentIdentifier): string {
  const params = Object.entries(component.params)
    .filter(
      ([, value]) => typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean',
    )
    .map(([key, value]) => `${key}=${String(value)}`);
  const children = Object.entries(component.children ?? {}).map(
    ([key, child]) => `${key}=${describeComponent(child)}`,
  );
  return `${component.type}(${[...params, ...children].join(', ')})`;
}

function anchor(runId: string, attack: string, attempt: number): string {
  return `a-${runId}-${attack}-${attempt}`.replace(/[^A-Za-z0-9_-]/g, '_');
}

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/**
 * Untrusted text for a report block: controls, bidi overrides and separators escaped (line feeds kept),
 * cut to `maxChars` code points, saying how much was left out. Escape the result with {@link escapeHtml}.
 */
export function truncate(value: string, maxChars: number): string {
  return neutralizeText(value, { maxChars, multiline: true, countOmitted: true });
}

const STYLE = `
body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1100px;padding:1rem 2rem;color:#1b1f24;background:#fff}
h1{margin:.2rem 0}h2{margin-top:2rem;border-bottom:2px solid #d0d7de}h2 small{font-weight:normal;color:#57606a;font-size:.6em}
h3{font-size:1rem;margin:.2rem 0}
table{border-collapse:collapse;margin:.5rem 0;width:100%}th,td{border:1px solid #d0d7de;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#f6f8fa}pre{white-space:pre-wrap;word-break:break-word;margin:0;font-size:13px}
.attempt{border:1px solid #d0d7de;border-left:6px solid #8c959f;border-radius:6px;padding:.5rem 1rem;margin:1rem 0}
.attempt.success{border-left-color:#cf222e}.attempt.failure{border-left-color:#1a7f37}.attempt.undetermined{border-left-color:#bf8700}.attempt.error{border-left-color:#6e7781}
.badge{display:inline-block;padding:0 .5rem;border-radius:1rem;color:#fff;font-size:.8rem;text-transform:uppercase}
.badge.success{background:#cf222e}.badge.failure{background:#1a7f37}.badge.undetermined{background:#9a6700}.badge.error{background:#6e7781}
td.success{color:#cf222e;font-weight:bold}td.undetermined{color:#9a6700}
dl{display:grid;grid-template-columns:12rem 1fr;gap:.3rem 1rem}dt{font-weight:600;color:#57606a}dd{margin:0}
.claim{background:#fff8c5;padding:.3rem}.verdict{font-weight:bold}dd.error{color:#a40e26}
.digest{font-size:11px;word-break:break-all}.note{color:#9a6700;margin:.2rem 0}
.tools{margin:0;padding-left:1.2rem;font-size:13px}.tools .refused{color:#9a6700}
.asr{font-size:1.05rem}
`;

/** How each containment reads in the report (SPEC §11). */
const CONTAINMENT_TEXT = {
  bwrap: 'bwrap — sandboxed: own PID namespace, host read-only, every process ended before judging',
  none: 'none — NOT sandboxed (campaign said sandbox: none): session killed and processes scanned only',
  in_process: 'in process — the agent ran inside Witness with file tools confined to the workspace',
} as const;

/** What cleanup could not remove (the attempt keeps its result; the path is for the operator). */
function cleanupNote(attempt: AttemptRecord, text: (value: string) => string): string {
  const cleanup = attempt.cleanup;
  if (cleanup === undefined || cleanup.removed) return '';
  const items = cleanup.failures.map(
    (failure) => `<li><code>${text(failure.path)}</code>: ${text(failure.reason)}</li>`,
  );
  if (cleanup.unlistedFailures > 0) items.push(`<li>… and ${cleanup.unlistedFailures} more</li>`);
  return `<dt>Left on disk</dt><dd><ul>${items.join('')}</ul></dd>`;
}
