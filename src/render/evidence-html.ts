import type { AttemptCleanup } from '../models/attempt-record.js';
import type { Change, ChangeSet, SurfaceChanges } from '../models/change-set.js';
import { matchesLocator, parseLocator } from '../models/locator.js';
import { NON_TEXT_PREFIX_BYTES, type Observation } from '../models/observation.js';
import type { TranscriptEvent } from '../models/transcript.js';
import { GAP_EXPLANATIONS } from '../models/vocabulary.js';
import type { DescribedCondition } from '../verdicts/describe-criterion.js';
import { resolveAllInManifest } from '../verdicts/through-links.js';
import { html, quoted, type SafeHtml, text } from './html.js';

/**
 * The evidence of one attempt as HTML, shared by the report's cards and the viewer's attempt page: the
 * observations (entries with sizes, digests and excerpts; each gap explained), what the agent changed, its
 * tool calls, and what cleanup left on disk. Every agent-controlled string is cut to a stated bound.
 */

export interface EvidenceLimits {
  /** Code points of any one line (a uri, a tool call, a gap's detail). */
  lineChars: number;
  /** Code points of retained file content shown per entry. */
  contentChars: number;
  /** Changes listed per group (the rest are counted). */
  changes: number;
}

export const DEFAULT_EVIDENCE_LIMITS: EvidenceLimits = { lineChars: 300, contentChars: 1_500, changes: 200 };

export function observationHtml(observation: Observation, limits: EvidenceLimits): SafeHtml {
  const { payload } = observation;
  const line = (value: string) => text(value, { maxChars: limits.lineChars });
  const rows = payload.entries.map(
    (entry) => html`<tr>
<td><code>${line(entry.uri)}</code></td>
<td class="num">${entry.sizeBytes}</td>
<td><code class="digest">${entry.sha256 ?? 'not read in full'}</code></td>
<td>${entry.content === null ? html`<em>not UTF-8 text</em>` : html`<pre>${text(entry.content, { maxChars: limits.contentChars, multiline: true })}</pre>`}${
      entry.notText === true
        ? html`<p class="note">not text (bytes that are not UTF-8, or a NUL byte): only its length, digest and the text before the first such byte, up to ${NON_TEXT_PREFIX_BYTES} bytes, are kept</p>`
        : entry.contentTruncated
          ? html`<p class="note">content retained only in part</p>`
          : ''
    }</td></tr>`,
  );
  const gaps = payload.coverage.gaps.map((gap) => gapItem(gap.reason, gap.uri, gap.detail, limits));
  return html`<div class="observation">
<p>Read of <code>${line(payload.scope.uri)}</code> (${payload.scope.match}) · acquisition <strong>${observation.acquisition}</strong> · ${payload.entries.length} ${payload.entries.length === 1 ? 'entry' : 'entries'} · observation <code class="id">${observation.id}</code></p>
${rows.length === 0 ? html`<p>No file exists there.</p>` : html`<table class="entries"><thead><tr><th>uri</th><th class="num">bytes</th><th>sha256</th><th>content (excerpt)</th></tr></thead><tbody>${rows}</tbody></table>`}
${gaps.length === 0 ? '' : html`<p>Gaps (why the read is incomplete):</p><ul class="gaps">${gaps}</ul>`}
</div>`;
}

/** One gap: its code, where, what it means, and the detail the source gave. */
export function gapItem(
  reason: string,
  uri: string | undefined | null,
  detail: string | undefined,
  limits: EvidenceLimits,
): SafeHtml {
  const meaning = (GAP_EXPLANATIONS as Readonly<Record<string, string>>)[reason] ?? '';
  return html`<li><code class="gap">${reason}</code>${uri === undefined || uri === null ? '' : html` at <code>${text(uri, { maxChars: limits.lineChars })}</code>`}${meaning === '' ? '' : html`: ${meaning}`}${
    detail === undefined ? '' : html` (${text(detail, { maxChars: limits.lineChars })})`
  }</li>`;
}

/**
 * What the agent changed, per surface (SPEC §12): the changes where the condition looks, then every other
 * change ("not asked for by the attack": a write the attack did not ask for is a tripwire, shown for failed
 * attacks too), undecided entries and the gaps that make a change set incomplete. A surface whose change
 * set could not be computed says why, never "no change".
 */
export function changesHtml(
  changes: readonly SurfaceChanges[] | undefined,
  condition: DescribedCondition | undefined,
  limits: EvidenceLimits,
): SafeHtml {
  if (changes === undefined || changes.length === 0) {
    return html`<section class="changes"><h2>What the agent changed</h2><p class="muted">No manifest was taken.</p></section>`;
  }
  const locator = conditionLocator(condition);
  return html`${changes.map((entry) => surfaceChangesHtml(entry, condition?.surface ?? 'workspace', locator, limits))}`;
}

function conditionLocator(condition: DescribedCondition | undefined) {
  if (condition?.uri === undefined) return undefined;
  try {
    return parseLocator(condition.uri, (condition.match ?? 'exact') as 'exact' | 'glob');
  } catch {
    return undefined;
  }
}

function surfaceChangesHtml(
  entry: SurfaceChanges,
  conditionSurface: string,
  locator: ReturnType<typeof parseLocator> | undefined,
  limits: EvidenceLimits,
): SafeHtml {
  const set = entry.changeSet;
  const line = (uri: string) => html`<code>${text(uri, { maxChars: limits.lineChars })}</code>`;
  if (set === null) {
    return html`<section class="changes"><h2>What the agent changed <small>(${entry.surface}: no change set)</small></h2>
<p class="note">${text(entry.error ?? 'a manifest is missing', { maxChars: limits.lineChars })}</p></section>`;
  }
  const asked = (uri: string) =>
    locator !== undefined && entry.surface === conditionSurface && matchesLocator(locator, uri);
  // Through in-root links (SPEC §13): the same files as the real changes, at the paths a link reaches
  // (`.git/hooks/x` through `.git -> real-git`, or a link to a file seen as that file), judged like them. Listed apart so each file is
  // counted once; one where the condition looks is shown there, naming its link, and its real path is then
  // not an "other change".
  const through = set.throughLinks;
  const throughAsked = (through?.changes ?? []).filter((change) => asked(change.uri));
  const realOf = realPathsOf(throughAsked, entry);
  const alsoAsked = new Set(realOf.values());
  const looks = (uri: string) => asked(uri) || alsoAsked.has(uri);
  const mine = set.changes.filter((change) => looks(change.uri));
  const mineUris = new Set(mine.map((change) => change.uri));
  // Files where the condition looks: a change through a link whose real path is listed is that same file.
  const files =
    mine.length +
    throughAsked.filter((change) => !mineUris.has(change.uri) && !mineUris.has(realOf.get(change.uri) ?? ''))
      .length;
  // The agent CLI's own state (its caches, sessions, logs: SPEC §13) is listed apart and not counted.
  const others = set.changes.filter((change) => !looks(change.uri) && change.agentState !== true);
  const state = set.changes.filter((change) => !looks(change.uri) && change.agentState === true);
  const list = (changes: readonly Change[]) =>
    html`<ul class="change-list">${changes.slice(0, limits.changes).map((change) => changeItem(change, limits))}${
      changes.length > limits.changes
        ? html`<li class="muted">… and ${changes.length - limits.changes} more</li>`
        : ''
    }</ul>`;
  const total = set.changes.length - state.length;
  return html`<section class="changes"><h2>What the agent changed <small>(${entry.surface}: ${total} ${total === 1 ? 'change' : 'changes'}${state.length === 0 ? '' : html` and ${state.length} in the agent’s own state`}, change set ${set.coverage.complete ? 'complete' : 'incomplete'})</small></h2>
${entry.error === null || entry.error === undefined ? '' : html`<p class="note">${text(entry.error, { maxChars: limits.lineChars })}</p>`}
${set.coverage.complete ? '' : html`<p class="note">Incomplete: a manifest could not be read in full, so changes beneath its gaps may be missing.</p>`}
${set.changes.length === 0 ? html`<p>No change.</p>` : ''}
${files === 0 ? '' : html`<h3>Where the condition looks: ${files}</h3>${list([...mine, ...throughAsked])}`}
${others.length === 0 ? '' : html`<h3 class="tripwire">Other changes (not asked for by the attack): ${others.length}</h3>${list(others)}`}
${state.length === 0 ? '' : html`<details><summary>The agent’s own state (its caches, sessions and logs): ${state.length}</summary>${list(state)}</details>`}
${through === undefined ? '' : throughLinksHtml(through, limits, list)}
${set.undecided.length === 0 ? '' : html`<h3>Undecided (could not be told): ${set.undecided.length}</h3><ul class="change-list">${set.undecided.slice(0, limits.changes).map((uri) => html`<li>${line(uri)}</li>`)}${set.undecided.length > limits.changes ? html`<li class="muted">… and ${set.undecided.length - limits.changes} more</li>` : ''}</ul>`}
${set.coverage.gaps.length === 0 ? '' : html`<ul class="gaps">${set.coverage.gaps.slice(0, 50).map((gap) => gapItem(gap.reason, gap.uri, gap.detail, limits))}</ul>`}
</section>`;
}

/**
 * The real paths of changes seen through links (a creation or modification resolved in the final manifest,
 * a deletion in the baseline), so the file the condition looked at through a link is not also listed as
 * a change nobody asked for.
 */
function realPathsOf(changes: readonly Change[], entry: SurfaceChanges): Map<string, string> {
  const real = new Map<string, string>();
  for (const [manifest, side] of [
    [entry.final, changes.filter((change) => change.kind !== 'deleted')],
    [entry.baseline, changes.filter((change) => change.kind === 'deleted')],
  ] as const) {
    if (manifest === null || side.length === 0) continue;
    const resolved = resolveAllInManifest(
      manifest,
      side.map((change) => change.uri),
      true,
    );
    side.forEach((change, i) => {
      const uri = resolved[i];
      if (uri !== null && uri !== undefined) real.set(change.uri, uri);
    });
  }
  return real;
}

/**
 * What the change set sees through in-root links: the changes at linked paths (each names its links), the
 * entries there whose change could not be told (a changed link that cannot be followed among them) and the
 * gaps seen through links or left by a link not followed. Collapsed: every change here is the real change listed above, at another path.
 */
function throughLinksHtml(
  through: NonNullable<ChangeSet['throughLinks']>,
  limits: EvidenceLimits,
  list: (changes: readonly Change[]) => SafeHtml,
): SafeHtml | '' {
  const { changes, undecided, gaps } = through;
  if (changes.length + undecided.length + gaps.length === 0) return '';
  const line = (uri: string) => html`<code>${text(uri, { maxChars: limits.lineChars })}</code>`;
  return html`<details class="through-links"><summary>Seen through in-root links (the same files, at the paths of the links): ${changes.length} ${changes.length === 1 ? 'change' : 'changes'}${undecided.length === 0 ? '' : html`, ${undecided.length} undecided`}${gaps.length === 0 ? '' : html`, ${gaps.length} ${gaps.length === 1 ? 'gap' : 'gaps'}`}</summary>
${changes.length === 0 ? '' : list(changes)}
${undecided.length === 0 ? '' : html`<p>Undecided through links:</p><ul class="change-list">${undecided.slice(0, limits.changes).map((uri) => html`<li>${line(uri)}</li>`)}${undecided.length > limits.changes ? html`<li class="muted">… and ${undecided.length - limits.changes} more</li>` : ''}</ul>`}
${gaps.length === 0 ? '' : html`<ul class="gaps">${gaps.slice(0, 50).map((gap) => gapItem(gap.reason, gap.uri, gap.detail, limits))}</ul>`}
</details>`;
}

function changeItem(change: Change, limits: EvidenceLimits): SafeHtml {
  const via = change.after?.via ?? change.before?.via;
  const before = change.before === null ? '' : describeEntry(change.before);
  const after = change.after === null ? '' : describeEntry(change.after);
  const sides = before === '' ? after : after === '' ? `was ${before}` : `${before} ⇒ ${after}`;
  return html`<li class="${change.kind}"><span class="kind">${change.kind.replace('_', ' ')}</span> <code>${text(change.uri, { maxChars: limits.lineChars })}</code>${
    change.movedFrom === undefined
      ? ''
      : html` (moved from <code>${text(change.movedFrom, { maxChars: limits.lineChars })}</code>)`
  }${via === undefined ? '' : html` (through <code>${text(via, { maxChars: limits.lineChars })}</code>)`}${
    sides === '' ? '' : html` <span class="muted">${text(sides, { maxChars: limits.lineChars })}</span>`
  }</li>`;
}

/** Type, size and mode of a manifest entry in words (`40 bytes, mode 755`, `symlink → x`). */
function describeEntry(entry: {
  type: string;
  sizeBytes: number;
  mode: number;
  linkTarget: string | null;
}): string {
  return [
    entry.type === 'file' ? '' : entry.type,
    entry.linkTarget === null ? '' : `→ ${entry.linkTarget}`,
    entry.type === 'directory' ? '' : `${entry.sizeBytes} bytes`,
    `mode ${entry.mode.toString(8).padStart(3, '0')}`,
  ]
    .filter((part) => part !== '')
    .join(', ');
}

/**
 * The tool calls, results, processes and HTTP exchanges of a transcript, in order. A call's arguments are
 * written `key="value"`, each value quoted once (never JSON inside quotes), so `\n` in a written file reads
 * as `\n` here and in the evidence.
 */
export function transcriptHtml(events: readonly TranscriptEvent[], limits: EvidenceLimits): SafeHtml {
  const line = (value: string) => text(value, { maxChars: limits.lineChars });
  const items = events.flatMap((event) => {
    switch (event.kind) {
      case 'tool_call':
        return [
          html`<li class="call"><code class="tool">${text(event.name, { maxChars: 100 })}</code> <code>${argumentsHtml(event.arguments, limits)}</code></li>`,
        ];
      case 'tool_result':
        return [
          html`<li class="result ${event.ok ? 'ok' : 'refused'}">→ ${event.ok ? 'ok' : 'refused'}: ${line(event.text)}</li>`,
        ];
      case 'process':
        return [
          html`<li class="call">process <code>${line([event.command, ...event.args].join(' '))}</code> → exit ${event.exitCode ?? event.signal ?? '?'}${event.timedOut ? ' (timed out)' : ''}</li>`,
        ];
      case 'http_exchange':
        return [
          html`<li class="call">HTTP ${text(event.request.method, { maxChars: 10 })} <code>${line(event.request.url)}</code> → ${event.response?.status ?? line(event.error ?? 'no response')}</li>`,
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
 * `path="/x" content="a\nb"`: an object's keys, each string value quoted once (its escapes marked like any
 * text's); anything else as JSON.
 */
function argumentsHtml(value: unknown, limits: EvidenceLimits): SafeHtml {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return argumentHtml(value, limits);
  const entries = Object.entries(value as Record<string, unknown>);
  return html`${entries.map(([key, entry], index) => html`${index === 0 ? '' : ' '}${text(key, { maxChars: 100 })}=${argumentHtml(entry, limits)}`)}`;
}

function argumentHtml(value: unknown, limits: EvidenceLimits): SafeHtml {
  if (typeof value !== 'string') return text(JSON.stringify(value) ?? 'null', { maxChars: limits.lineChars });
  return quoted(value, { maxChars: limits.lineChars });
}

/** What cleanup could not remove (the attempt keeps its result; the paths are for the operator). */
export function cleanupHtml(cleanup: AttemptCleanup | undefined, limits: EvidenceLimits): SafeHtml | '' {
  if (cleanup === undefined || cleanup.removed) return '';
  return html`<p class="error"><strong>Left on disk</strong> not everything was removed:</p><ul>${cleanup.failures.map(
    (failure) =>
      html`<li><code>${text(failure.path, { maxChars: limits.lineChars })}</code>: ${text(failure.reason, { maxChars: limits.lineChars })}</li>`,
  )}${cleanup.unlistedFailures > 0 ? html`<li>… and ${cleanup.unlistedFailures} more not listed</li>` : ''}</ul>`;
}
