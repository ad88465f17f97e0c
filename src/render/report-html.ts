import type { AttemptRecord, CampaignRun } from '../attacks/attempt-record.js';
import { groupByLibrary, LIBRARY_AXES } from '../attacks/library/library-groups.js';
import type { StoredRun } from '../attacks/memory-recorder.js';
import {
  type AttemptOutcome,
  attemptLabel,
  formatControls,
  formatSuccessRate,
  formatUtility,
  tallyAttempts,
  taskLabel,
} from '../attacks/outcome.js';
import type { SurfaceChanges } from '../models/change-set.js';
import { isFileCondition } from '../models/condition.js';
import type { ComponentIdentifier } from '../models/identifier.js';
import { matchesLocator, parseLocator } from '../models/locator.js';
import type { Observation } from '../models/observation.js';
import { GAP_EXPLANATIONS } from '../models/vocabulary.js';
import { diffLines } from '../text/line-diff.js';
import { neutralizeText } from '../text/quote-text.js';
import { describeCondition } from '../verdicts/describe-criterion.js';

/**
 * Renders campaign runs as one self-contained HTML file: inline CSS, no scripts, no external resources,
 * and a Content-Security-Policy that forbids loading anything, so viewing it needs no network and
 * attacker text in it cannot run. Every string that came from a prompt, a reply, a file or a tool is
 * escaped and truncated (`maxTextChars`), so a payload is shown, never executed or allowed to flood the page.
 */

/** A run and its attempts, as `loadReportRuns` reads them back. */
export type ReportRun = StoredRun;

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
  const all = tallyAttempts(runs.flatMap((entry) => entry.attempts));

  const sections = runs.map(({ run, attempts }) => {
    const totals = tallyAttempts(attempts);
    const perAttack = run.attacks
      .filter((attack) => attack.control !== true)
      .map((attack) => {
        const mine = attempts.filter((attempt) => attempt.attack === attack.id);
        const t = tallyAttempts(mine);
        const condition = attack.expectation.conditions[0];
        const objective = attack.expectation.objective;
        return `<tr><td><a href="#${anchor(run.runId, attack.id, 1)}">${text(attack.id)}</a></td><td>${
          condition === undefined ? '' : line(describeCondition(condition), 600)
        }${objective === undefined ? '' : `<br><small>objective: ${line(objective)}</small>`}</td><td>${t.attempts}</td>${outcomeCells(t)}<td>${escapeHtml(formatSuccessRate(t))}</td></tr>`;
      });
    const controlRows = run.attacks
      .filter((attack) => attack.control === true)
      .map((attack) => {
        const c = tallyAttempts(attempts.filter((attempt) => attempt.attack === attack.id)).controls;
        return `<tr${c.tripped > 0 ? ' class="tripped"' : ''}><td><a href="#${anchor(run.runId, attack.id, 1)}">${text(attack.id)}</a></td><td>${c.attempts}</td><td class="success">${c.tripped}</td><td class="failure">${c.clean}</td><td class="undetermined">${c.undetermined}</td><td class="error">${c.error}</td></tr>`;
      });
    const controls =
      controlRows.length === 0
        ? ''
        : `<h3>Controls (benign prompts, left out of the success rate)</h3>
${totals.controls.tripped > 0 ? `<p class="alarm">${escapeHtml(formatControls(totals.controls))}. Every verdict of this run is suspect.</p>` : ''}
<table class="counts"><thead><tr><th>control</th><th>attempts</th><th>tripped</th><th>clean</th><th>undetermined</th><th>error</th></tr></thead><tbody>${controlRows.join('\n')}</tbody></table>`;
    const attemptSections = renderAttemptSections(attempts, (attempt, previous) =>
      renderAttempt(attempt, text, maxContent, previous),
    );
    return `<section class="run">
<h2>${text(run.campaign)} <small>run ${text(run.runId)}</small></h2>
<p class="meta">Target <code>${text(describeTarget(run))}</code> · started ${text(run.startedAt)}${
      run.description === null ? '' : ` · ${text(run.description)}`
    }</p>
<p class="asr">Attack success rate: <strong>${escapeHtml(formatSuccessRate(totals))}</strong></p>${
      totals.utility.attempts === 0
        ? ''
        : `\n<p class="utility">Utility (the user's task done): <strong>${escapeHtml(formatUtility(totals))}</strong></p>`
    }
<table class="counts"><thead><tr><th>attack</th><th>condition</th><th>attempts</th><th>success</th><th>failure</th><th>undetermined</th><th>error</th><th>success rate</th></tr></thead>
<tbody>${perAttack.join('\n')}</tbody>
<tfoot><tr><th colspan="2">all attacks</th><th>${totals.attempts}</th>${outcomeCells(totals)}<th></th></tr></tfoot></table>
${renderLibraryGroups(run, attempts)}
${controls}
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

/**
 * Library attacks (`<objective>.<carrier>.<strategy>`) grouped by each axis (controls left out); nothing
 * for other runs. The viewer's run page shows the same groups.
 */
function renderLibraryGroups(run: CampaignRun, attempts: readonly AttemptRecord[]): string {
  const controls = new Set(
    run.attacks.filter((attack) => attack.control === true).map((attack) => attack.id),
  );
  const groups = groupByLibrary(
    attempts.map(({ attack, outcome }) => ({ attack, outcome, control: controls.has(attack) })),
  );
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
  previousInjection?: string,
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
  const label = attemptLabel(attempt);
  const changes = renderChanges(attempt, text);
  return `<article class="attempt ${attempt.outcome}${attempt.control ? ' control' : ''}" id="${anchor(attempt.runId, attempt.attack, attempt.attempt)}">
<h3><span class="badge ${attempt.outcome}">${label.replace('_', ' ')}</span> ${text(attempt.attack)} · attempt ${attempt.attempt}</h3>
<dl>
<dt>Prompt</dt><dd><pre>${text(attempt.prompt)}</pre></dd>
<dt>Reply (the agent's claim)</dt><dd><pre class="claim">${attempt.reply === null ? '<em>no reply</em>' : text(attempt.reply)}</pre></dd>
<dt>File-system verdict</dt><dd class="verdict">${escapeHtml(verdict)}</dd>
${criterion(attempt)}
<dt>Rationale</dt><dd>${score === null ? '<em>none</em>' : escapeHtml(neutralizeText(score.rationale, { maxChars: 2_000, escapeBackslash: false }))}</dd>
${userTask(attempt)}
${injection(attempt, previousInjection)}
${attempt.error === null ? '' : `<dt>Error</dt><dd class="error">${text(attempt.error)}</dd>`}
<dt>Evidence</dt><dd>${evidence === '' ? '<em>no observation was made</em>' : evidence}</dd>
<dt>Changes</dt><dd>${changes}</dd>
${tools.length === 0 ? '' : `<dt>Tool calls</dt><dd><ul class="tools">${tools.join('')}</ul></dd>`}
${attempt.workspace?.kept ? `<dt>Workspace (kept)</dt><dd><code>${text(attempt.workspace.root)}</code></dd>` : ''}
${attempt.containment === undefined ? '' : `<dt>Containment</dt><dd>${escapeHtml(CONTAINMENT_TEXT[attempt.containment])}</dd>`}
${cleanupNote(attempt, text)}
</dl></article>`;
}

/**
 * The attempts in order, each adaptive attack's chain (SPEC §15) as one collapsible block: its outcome (a
 * success if any round succeeded, else its last round's) in the summary, its rounds inside.
 */
function renderAttemptSections(
  attempts: readonly AttemptRecord[],
  renderOne: (attempt: AttemptRecord, previousInjection?: string) => string,
): string[] {
  const out: string[] = [];
  for (let index = 0; index < attempts.length; ) {
    const attempt = attempts[index] as AttemptRecord;
    if (attempt.chain === undefined) {
      out.push(renderOne(attempt));
      index++;
      continue;
    }
    const rounds: AttemptRecord[] = [];
    while (index < attempts.length && attempts[index]?.chain === attempt.chain)
      rounds.push(attempts[index++] as AttemptRecord);
    const outcome = rounds.some((round) => round.outcome === 'success')
      ? 'success'
      : (rounds.at(-1)?.outcome ?? 'error');
    out.push(`<details class="chain ${outcome}"><summary><span class="badge ${outcome}">${outcome}</span> ${escapeHtml(
      neutralizeText(attempt.attack, { maxChars: 200 }),
    )} · attempt ${attempt.attempt} · adaptive: ${rounds.length} round${rounds.length === 1 ? '' : 's'}</summary>
${rounds.map((round, at) => renderOne(round, rounds[at - 1]?.adaptation?.injection)).join('\n')}
</details>`);
  }
  return out;
}

/** A round's injection text: in full for round 1, as a diff from the round before after that. */
function injection(attempt: AttemptRecord, previous: string | undefined): string {
  const adaptation = attempt.adaptation;
  if (adaptation === undefined) return '';
  const where = `<code>${escapeHtml(neutralizeText(adaptation.plant, { maxChars: 300 }))}</code>`;
  const shown = (value: string) => escapeHtml(neutralizeText(value, { maxChars: 2_000, multiline: true }));
  if (attempt.round === 1 || attempt.round === undefined) {
    return `<dt>Injection (round ${attempt.round ?? 1})</dt><dd>${where} as planted<pre class="injection">${shown(adaptation.injection)}</pre></dd>`;
  }
  const body =
    previous === undefined
      ? `<pre class="injection">${shown(adaptation.injection)}</pre>`
      : `<pre class="diff">${diffLines(previous, adaptation.injection)
          .map(
            (line) =>
              `<span class="${line.kind}">${line.kind === 'added' ? '+' : line.kind === 'removed' ? '-' : ' '} ${shown(line.text)}</span>`,
          )
          .join('\n')}</pre>`;
  return `<dt>Injection (round ${attempt.round})</dt><dd>${where} as the attacker rewrote it${
    previous === undefined ? '' : ' (changes from the round before)'
  }${body}</dd>`;
}

/** The user's task (SPEC §16): done or not, by which criterion, and why — from the same evidence. */
function userTask(attempt: AttemptRecord): string {
  const task = attempt.task;
  if (task === undefined) return '';
  const condition = task.expectation.conditions[0];
  return `<dt>User task</dt><dd class="task ${task.outcome}"><strong>${taskLabel(task.outcome)}</strong>${
    condition === undefined ? '' : ` — ${escapeHtml(describeCondition(condition))}`
  }<br><small>${escapeHtml(neutralizeText(task.rationale, { maxChars: 2_000, escapeBackslash: false }))}</small></dd>`;
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

/** Most changes listed per surface; the rest are counted. */
const MAX_CHANGES_LISTED = 200;

/**
 * What the attempt changed, per surface: the changes the condition looks at, then every other change
 * ("other changes": a write the attack did not ask for is a tripwire, shown for failed attacks too),
 * undecided entries and the gaps that make a change set incomplete.
 */
function renderChanges(
  attempt: AttemptRecord,
  text: (value: string | null | undefined, cap?: number) => string,
): string {
  const changes = attempt.changes ?? [];
  if (changes.length === 0) return '<em>no manifest was taken</em>';
  const condition = attempt.expectation.conditions[0];
  let locator: ReturnType<typeof parseLocator> | undefined;
  try {
    locator =
      condition === undefined || !isFileCondition(condition)
        ? undefined
        : parseLocator(condition.uri, condition.match);
  } catch {
    locator = undefined;
  }
  return changes
    .map((entry) =>
      renderSurfaceChanges(
        entry,
        condition !== undefined && isFileCondition(condition)
          ? (condition.surface ?? 'workspace')
          : 'network',
        locator,
        text,
      ),
    )
    .join('\n');
}

function renderSurfaceChanges(
  entry: SurfaceChanges,
  conditionSurface: string,
  locator: ReturnType<typeof parseLocator> | undefined,
  text: (value: string | null | undefined, cap?: number) => string,
): string {
  const set = entry.changeSet;
  if (set === null) {
    return `<div class="changes"><p>The ${entry.surface}: no change set (${text(entry.error ?? 'a manifest is missing', 300)}).</p></div>`;
  }
  const asked = (uri: string) =>
    locator !== undefined && entry.surface === conditionSurface && matchesLocator(locator, uri);
  const item = (change: (typeof set.changes)[number]) => {
    const before = change.before === null ? '' : describeEntry(change.before);
    const after = change.after === null ? '' : describeEntry(change.after);
    const moved =
      change.movedFrom === undefined ? '' : ` (moved from <code>${text(change.movedFrom, 300)}</code>)`;
    return `<li class="${change.kind}"><span class="kind">${change.kind.replace('_', ' ')}</span> <code>${text(change.uri, 300)}</code>${moved}${
      before === '' && after === ''
        ? ''
        : ` <small>${escapeHtml(before)}${before !== '' && after !== '' ? ' → ' : ''}${escapeHtml(after)}</small>`
    }</li>`;
  };
  const mine = set.changes.filter((change) => asked(change.uri));
  const others = set.changes.filter((change) => !asked(change.uri));
  const list = (changes: typeof set.changes) =>
    `<ul class="change-list">${changes.slice(0, MAX_CHANGES_LISTED).map(item).join('')}${
      changes.length > MAX_CHANGES_LISTED ? `<li>… and ${changes.length - MAX_CHANGES_LISTED} more</li>` : ''
    }</ul>`;
  const gaps = set.coverage.gaps
    .slice(0, 50)
    .map(
      (gap) =>
        `<li><code>${gap.reason}</code>${gap.uri === undefined ? '' : ` at <code>${text(gap.uri, 300)}</code>`}: ${escapeHtml(GAP_EXPLANATIONS[gap.reason])}${
          gap.detail === undefined ? '' : ` (${text(gap.detail, 300)})`
        }</li>`,
    );
  return `<div class="changes"><p>The ${entry.surface}: ${set.changes.length} change${set.changes.length === 1 ? '' : 's'}, change set <strong>${
    set.coverage.complete ? 'complete' : 'incomplete'
  }</strong>.</p>
${mine.length === 0 ? '' : `<p>Where the condition looks:</p>${list(mine)}`}
${others.length === 0 ? '' : `<p class="tripwire">Other changes (not asked for by the attack):</p>${list(others)}`}
${
  set.undecided.length === 0
    ? ''
    : `<p>Undecided (could not be told): ${set.undecided
        .slice(0, 20)
        .map((uri) => `<code>${text(uri, 300)}</code>`)
        .join(', ')}${set.undecided.length > 20 ? ` and ${set.undecided.length - 20} more` : ''}</p>`
}
${gaps.length === 0 ? '' : `<p>Gaps:</p><ul class="gaps">${gaps.join('')}</ul>`}</div>`;
}

function describeEntry(entry: {
  type: string;
  sizeBytes: number;
  mode: number;
  linkTarget: string | null;
}): string {
  const mode = entry.mode.toString(8).padStart(4, '0');
  if (entry.type === 'symlink') return `symlink (${truncate(entry.linkTarget ?? '?', 200)})`;
  if (entry.type === 'directory') return `directory ${mode}`;
  return `${entry.type} ${entry.sizeBytes} B ${mode}`;
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
.asr,.utility{font-size:1.05rem}
.alarm{background:#ffebe9;border:2px solid #cf222e;padding:.4rem;font-weight:bold}tr.tripped td{background:#ffebe9}
.change-list{margin:.2rem 0;padding-left:1.2rem;font-size:13px}.change-list .kind{font-weight:600;text-transform:uppercase;font-size:11px}
.tripwire{color:#9a6700;font-weight:600}.attempt.control{border-style:dashed}
details.chain{border:1px solid #d0d7de;border-radius:6px;padding:.3rem .8rem;margin:1rem 0}details.chain>summary{cursor:pointer;font-weight:600}
pre.diff .added{background:#dafbe1}pre.diff .removed{background:#ffebe9}
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
