import type { AttemptRecord, CampaignRun } from '../attacks/attempt-record.js';
import {
  attemptLabel,
  decidingAttempts,
  type FailOnOutcome,
  matchedFailOn,
  taskLabel,
} from '../attacks/outcome.js';
import { neutralizeText } from '../text/quote-text.js';
import { describeCondition } from '../verdicts/describe-criterion.js';
import { verdictText } from './attempt-words.js';

/**
 * JUnit XML for CI dashboards (`witness run --junit FILE`): one test suite per run, one test case per
 * attempt (`<campaign>.<attack>` / `attempt N`). An attempt whose ending is in `failOn` is a `<failure>`
 * (`<error>` for an error outcome); an undetermined attempt not in `failOn` is `<skipped>`, never a pass
 * that hides it; everything else passes. An attempt whose user task failed is a `<failure>` under
 * `--fail-on task_failure`. An adaptive attack's chain is one case, named by its attempt and round count,
 * with the outcome of its deciding round. Each case says what the terminal and the report say: the
 * outcome, the verdict, the criterion, the rationale (or the error) and the user task. Every string comes
 * from a campaign, an agent or a file, so it is neutralized like any text shown to a person
 * (src/text/quote-text.ts), escaped for XML, and stripped of characters XML 1.0 cannot carry (a control
 * character in a file name would otherwise make the whole report unreadable to the dashboard).
 */
export function renderJunitXml(
  run: CampaignRun,
  attempts: readonly AttemptRecord[],
  failOn: ReadonlySet<FailOnOutcome>,
): string {
  // An adaptive attack's chain is one case (SPEC §15), stood for by its deciding round.
  const deciding = decidingAttempts(attempts);
  const rounds = new Map<string, number>();
  for (const attempt of attempts)
    if (attempt.chain !== undefined) rounds.set(attempt.chain, (rounds.get(attempt.chain) ?? 0) + 1);
  const cases = deciding.map((attempt) =>
    renderCase(run, attempt, failOn, attempt.chain === undefined ? undefined : rounds.get(attempt.chain)),
  );
  const failures = cases.filter((c) => c.kind === 'failure').length;
  const errors = cases.filter((c) => c.kind === 'error').length;
  const skipped = cases.filter((c) => c.kind === 'skipped').length;
  const seconds = attempts.reduce((sum, attempt) => sum + durationSeconds(attempt), 0);
  return `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="witness" tests="${cases.length}" failures="${failures}" errors="${errors}" skipped="${skipped}" time="${seconds.toFixed(3)}">
<testsuite name="${xml(run.campaign)}" id="${xml(run.runId)}" tests="${cases.length}" failures="${failures}" errors="${errors}" skipped="${skipped}" time="${seconds.toFixed(3)}" timestamp="${xml(run.startedAt)}">
${cases.map((c) => c.xml).join('\n')}
</testsuite>
</testsuites>
`;
}

interface RenderedCase {
  kind: 'pass' | 'failure' | 'error' | 'skipped';
  xml: string;
}

function renderCase(
  run: CampaignRun,
  attempt: AttemptRecord,
  failOn: ReadonlySet<FailOnOutcome>,
  rounds?: number,
): RenderedCase {
  const open = `<testcase classname="${xml(`${run.campaign}.${attempt.attack}`)}" name="attempt ${attempt.attempt}${rounds === undefined ? '' : ` (adaptive, ${rounds} round${rounds === 1 ? '' : 's'})`}" time="${durationSeconds(attempt).toFixed(3)}">`;
  const label = attemptLabel(attempt);
  const why = neutralizeText(attempt.error ?? attempt.score?.rationale ?? 'no verdict', { maxChars: 4_000 });
  const message = `${label}: ${why}`;
  const gate = matchedFailOn(attempt, failOn);
  const conditions = (attempt.score?.scoredExpectation ?? attempt.expectation).conditions;
  const taskRationale = neutralizeText(attempt.task?.rationale ?? '', { maxChars: 4_000 });
  const lines = [
    `outcome: ${label}`,
    `verdict: ${verdictText(attempt.score)}`,
    ...conditions.map((condition) => `criterion: ${describeCondition(condition)}`),
    ...(attempt.score === null
      ? []
      : [`rationale: ${neutralizeText(attempt.score.rationale, { maxChars: 4_000 })}`]),
    ...(attempt.error === null ? [] : [`error: ${neutralizeText(attempt.error, { maxChars: 4_000 })}`]),
    ...(attempt.targetError === undefined
      ? []
      : [
          `agent failed (${attempt.targetError.kind}): ${neutralizeText(attempt.targetError.message, { maxChars: 4_000 })}`,
        ]),
    ...(attempt.task === undefined
      ? []
      : [`user task: ${taskLabel(attempt.task.outcome)}: ${taskRationale}`]),
  ];
  const body = `<system-out>${xml(lines.join('\n'))}</system-out>`;
  if (gate === 'task_failure') {
    const taskMessage = `user task not done: ${taskRationale}`;
    return {
      kind: 'failure',
      xml: `${open}<failure type="task_failure" message="${xml(shorten(taskMessage))}">${xml(taskMessage)}</failure>${body}</testcase>`,
    };
  }
  if (gate !== null) {
    const element = attempt.outcome === 'error' ? 'error' : 'failure';
    return {
      kind: element,
      xml: `${open}<${element} type="${label}" message="${xml(shorten(message))}">${xml(message)}</${element}>${body}</testcase>`,
    };
  }
  if (attempt.outcome === 'undetermined') {
    return { kind: 'skipped', xml: `${open}<skipped message="${xml(shorten(message))}"/>${body}</testcase>` };
  }
  return { kind: 'pass', xml: `${open}${body}</testcase>` };
}

function durationSeconds(attempt: AttemptRecord): number {
  const ms = Date.parse(attempt.finishedAt) - Date.parse(attempt.startedAt);
  return Number.isFinite(ms) && ms > 0 ? ms / 1000 : 0;
}

/**
 * Escapes text for XML, replacing what XML 1.0 cannot hold at all, even escaped (C0 controls except tab,
 * CR and LF; lone surrogates; U+FFFE and U+FFFF), with U+FFFD.
 */
export function xml(text: string): string {
  let out = '';
  for (const ch of text) {
    const code = ch.codePointAt(0) as number;
    const allowed =
      code === 0x9 ||
      code === 0xa ||
      code === 0xd ||
      (code >= 0x20 && code < 0xd800) ||
      (code > 0xdfff && code < 0xfffe) ||
      code > 0xffff;
    if (!allowed) out += '\uFFFD';
    else if (ch === '&' || ch === '<' || ch === '>' || ch === '"' || ch === "'") out += `&#${code};`;
    else out += ch;
  }
  return out;
}

function shorten(text: string): string {
  const chars = Array.from(text.replace(/\s+/g, ' '));
  return chars.length <= 300 ? chars.join('') : `${chars.slice(0, 299).join('')}…`;
}
