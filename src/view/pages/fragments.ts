import type { CampaignRun } from '../../attacks/attempt-record.js';
import { formatSuccessRate, formatUtility, type OutcomeTotals, taskLabel } from '../../attacks/outcome.js';
import type { AttemptTask } from '../../models/attempt-task.js';
import type { Condition } from '../../models/condition.js';
import { isFileCondition } from '../../models/condition.js';
import type { ComponentIdentifier } from '../../models/identifier.js';
import { ATTACK_OUTCOMES, type AttackOutcome } from '../../models/vocabulary.js';
import { html, type SafeHtml, urlPart } from '../../render/html.js';
import { describeRequestSent } from '../../verdicts/describe-criterion.js';

/** Pieces several pages share: links, outcome badges and counts, the criterion in words. */

export function runUrl(runId: string): string {
  return `/runs/${urlPart(runId)}`;
}

/** An attempt's page; a round of an adaptive attack's chain (SPEC §15) is named by `?round=N`. */
export function attemptUrl(runId: string, attack: string, attempt: number, round?: number): string {
  return `/runs/${urlPart(runId)}/attempts/${urlPart(attack)}/${attempt}${round === undefined ? '' : `?round=${round}`}`;
}

export function compareUrl(left: string, right: string): string {
  return `/compare?a=${urlPart(left)}&b=${urlPart(right)}`;
}

export function badge(outcome: AttackOutcome): SafeHtml {
  return html`<span class="badge ${outcome}">${outcome}</span>`;
}

export function outcomeCells(totals: OutcomeTotals): SafeHtml {
  return html`${ATTACK_OUTCOMES.map((outcome) => html`<td class="num ${totals[outcome] > 0 ? outcome : ''}">${totals[outcome]}</td>`)}`;
}

export const OUTCOME_HEADERS = html`${ATTACK_OUTCOMES.map((outcome) => html`<th class="num">${outcome}</th>`)}`;

/** "4/6 decided (66.7%); 2 undetermined (50%–75% if decided)". */
export function successRate(totals: OutcomeTotals): SafeHtml {
  return html`<span class="rate">${formatSuccessRate(totals)}</span>`;
}

/** "8/8 decided (100%); without attack (controls) 2/2 decided (100%)", or a muted "no task" (SPEC §16). */
export function utilityRate(totals: OutcomeTotals): SafeHtml {
  const words = formatUtility(totals);
  return words === ''
    ? html`<span class="muted">no user task</span>`
    : html`<span class="rate utility">${words}</span>`;
}

/** The user's task of an attempt: done or not, the criterion in words, and why. */
export function taskVerdict(task: AttemptTask): SafeHtml {
  return html`<p class="task ${task.outcome}"><strong>User task</strong> ${taskLabel(task.outcome)} — <span class="task-criterion">${describeCriterion(task.expectation.conditions[0])}</span><br><span class="rationale">${task.rationale}</span></p>`;
}

export function describeTarget(run: CampaignRun): string {
  return describeComponent(run.target);
}

/** `AgentTarget(planner=MockPlanner(mode=vulnerable), toolbox=…)`: simple params, then the parts. */
function describeComponent(component: ComponentIdentifier): string {
  const params = Object.entries(component.params)
    .filter(([, value]) => ['string', 'number', 'boolean'].includes(typeof value))
    .map(([key, value]) => `${key}=${String(value)}`);
  const children = Object.entries(component.children ?? {}).map(
    ([key, child]) => `${key}=${describeComponent(child)}`,
  );
  return `${component.type}(${[...params, ...children].join(', ')})`;
}

/** What must hold for the attack to count as a success, in words. */
export function describeCriterion(condition: Condition | undefined): string {
  if (condition === undefined) return 'no condition';
  if (!isFileCondition(condition)) return describeRequestSent(condition);
  const loose = condition as unknown as Record<string, unknown>;
  const where = `${condition.match === 'glob' ? 'a file matching' : 'the file'} ${condition.uri}`;
  const surface = loose.surface === 'home' ? " in the attempt's home" : '';
  switch (loose.conditionType) {
    case 'file_created':
      return `${where}${surface} exists and did not exist before the attempt`;
    case 'file_deleted':
      return `${where}${surface}, present before the attempt, is gone`;
    case 'file_modified':
      return `${where}${surface} changed (content, type or mode) during the attempt`;
    default: {
      const matcher = condition.conditionType === 'content_written' ? condition.matcher : undefined;
      const executable = loose.executable === true ? ', and it is executable' : '';
      if (matcher === undefined) return `${where}${surface} holds nonempty content${executable}`;
      const verb = { contains: 'contains', equals: 'equals', regex: 'matches the regular expression' }[
        matcher.matcherType
      ];
      const options = [
        matcher.caseSensitive ? 'case-sensitive' : 'ignoring case',
        matcher.ignoreWhitespace ? 'surrounding whitespace trimmed' : 'whitespace kept',
      ].join(', ');
      return `${where}${surface} holds text that ${verb} "${matcher.value}" (${options})${executable}`;
    }
  }
}

export function when(timestamp: string): SafeHtml {
  return html`<time datetime="${timestamp}">${timestamp.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}</time>`;
}

/** A select box for a GET form; `selected` is kept so the filtered page shows what filters it. */
export function select(
  name: string,
  label: string,
  options: ReadonlyArray<{ value: string; label: string }>,
  selected: string | undefined,
): SafeHtml {
  return html`<label>${label} <select name="${name}">${options.map(
    (option) =>
      html`<option value="${option.value}"${option.value === (selected ?? '') ? html` selected` : ''}>${option.label}</option>`,
  )}</select></label>`;
}
