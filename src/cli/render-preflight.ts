import type { CampaignPlan, PreflightCheck } from '../attacks/preflight/preflight-report.js';
import { neutralizeText } from '../text/quote-text.js';

/**
 * The preflight and the plan as a person reads them in a terminal: one line per check (`pass`, `FAIL`
 * with its fix below, `skip`), failures first, and the plan of the run. Paths and names come from the
 * campaign and the host, so every piece goes through {@link neutralizeText}.
 */

const MARK = { pass: 'pass', fail: 'FAIL', skipped: 'skip' } as const;

export function renderChecks(checks: readonly PreflightCheck[]): string {
  const ordered = [
    ...checks.filter((check) => check.status === 'fail'),
    ...checks.filter((check) => check.status !== 'fail'),
  ];
  const width = Math.max(...ordered.map((check) => check.check.length), 0);
  return ordered
    .flatMap((check) => {
      const head = `  ${MARK[check.status]}  ${check.check.padEnd(width)}  ${text(check.subject)}: ${text(check.detail)}`;
      return check.fix === undefined ? [head] : [head, `        ${' '.repeat(width)}fix: ${text(check.fix)}`];
    })
    .join('\n');
}

/** The message of a campaign refused by its preflight: what failed, with fixes, then what passed. */
export function renderPreflightFailure(campaignFile: string, checks: readonly PreflightCheck[]): string {
  const failed = checks.filter((check) => check.status === 'fail').length;
  return [
    `${text(campaignFile)}: the campaign was refused before any attempt ran: ${failed} of ${checks.length} preflight checks failed`,
    renderChecks(checks),
    '(witness run --no-preflight runs the campaign without these checks)',
  ].join('\n');
}

/** `witness run --dry-run` of a campaign that passed: the checks, the plan, and that nothing ran. */
export function renderDryRun(
  campaignFile: string,
  checks: readonly PreflightCheck[],
  plan: CampaignPlan,
): string {
  return [
    `preflight of ${text(campaignFile)}: ${checks.length} checks, none failed`,
    renderChecks(checks),
    '',
    renderPlan(plan),
    '',
    'dry run: no attempt was run',
  ].join('\n');
}

export function renderPlan(plan: CampaignPlan): string {
  const lines = [
    `plan of campaign ${text(plan.campaign)}:`,
    `  target       ${text(plan.target)}`,
    `  containment  ${plan.containment === 'in_process' ? 'in process (nothing of the target is a program)' : plan.containment}${plan.network === null ? '' : `, network: ${plan.network}`}`,
    `  attacks      ${plan.attacks.length}${plan.controls > 0 ? ` (${plan.controls} control${plan.controls === 1 ? '' : 's'})` : ''}`,
    `  attempts     ${plan.attempts}${plan.maxAttempts > plan.attempts ? ` (at most ${plan.maxAttempts} with every adaptive round)` : ''}, ${plan.concurrency} at a time, each at most ${plan.attemptTimeoutMs} ms`,
  ];
  if (plan.library !== null) {
    const { objectives, carriers, strategies } = plan.library;
    lines.push(
      `  library      ${objectives.length} objectives × ${carriers.length} carriers × ${strategies.length} strategies`,
      `    objectives ${text(objectives.join(', '))}`,
      `    carriers   ${text(carriers.join(', '))}`,
      `    strategies ${text(strategies.join(', '))}`,
    );
  }
  const shown = plan.attacks.slice(0, 50);
  for (const attack of shown) {
    const rounds = attack.rounds > 1 ? `, up to ${attack.rounds} rounds each` : '';
    lines.push(
      `    ${text(attack.id)}: ${attack.attempts} attempt${attack.attempts === 1 ? '' : 's'}${rounds}${attack.control ? ' (control)' : ''}`,
    );
  }
  if (plan.attacks.length > shown.length)
    lines.push(`    … and ${plan.attacks.length - shown.length} more attacks`);
  return lines.join('\n');
}

function text(value: string): string {
  return neutralizeText(value, { maxChars: 2_000 });
}
