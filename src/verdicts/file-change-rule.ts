import { InvalidExpectationError } from '../errors.js';
import type { Change, ChangeSet } from '../models/change-set.js';
import { conditionSurface, type FileChangeCondition } from '../models/condition.js';
import { matchesLocator, type ParsedLocator, parseLocator } from '../models/locator.js';
import { neutralizeText, quoteText } from '../text/quote-text.js';
import { gapsCouldHide } from './gap-scope.js';
import { linkGapCouldHide } from './through-links.js';

/**
 * The shared verdict discipline of the change conditions (SPEC §12), applied to a change set. Pure.
 *
 * - A change that matches the locator and the criterion proves the condition: **true**, even when the
 *   change set is incomplete elsewhere (the change rests on entries both manifests hold).
 * - **false** only when both manifests were taken, no entry matching the locator is undecided, and no gap
 *   of either manifest could hide a matching entry.
 * - Otherwise **undetermined**, naming the gaps or the undecided entries.
 */

export interface ChangeJudgement {
  status: 'complete' | 'undetermined';
  value: boolean | null;
  rationale: string;
  /** Entries whose change proves the condition. */
  provenUris: string[];
  /** Matching entries whose change could not be told. */
  unknownUris: string[];
}

export interface FileChangeRule {
  /** What the condition asks, for rationales ("a matching file was deleted"). */
  criterion: string;
  /** True when this change proves the condition. */
  proves(change: Change): boolean;
}

export function judgeFileChange(
  changeSet: ChangeSet | null,
  condition: FileChangeCondition,
  rule: FileChangeRule,
): ChangeJudgement {
  const where = describeLocation(condition);
  const question = `whether ${rule.criterion} at ${where}`;
  if (changeSet === null) {
    return undetermined(
      `Undetermined ${question}: no manifest of the ${conditionSurface(condition)} was taken.`,
    );
  }
  if (changeSet.surface !== conditionSurface(condition)) {
    throw new InvalidExpectationError(
      `a ${changeSet.surface} change set cannot judge a condition on the ${conditionSurface(condition)}`,
    );
  }
  const locator = parseLocator(condition.uri, condition.match);
  // What lies at paths through in-root directory links is judged like the rest (SPEC §13).
  const through = changeSet.throughLinks;
  const changes = through === undefined ? changeSet.changes : [...changeSet.changes, ...through.changes];
  const proven = changes.filter((change) => matches(locator, change.uri) && rule.proves(change));
  const provenUris = proven.map((change) => change.uri);
  const unknownUris = [...changeSet.undecided, ...(through?.undecided ?? [])].filter((uri) =>
    matches(locator, uri),
  );
  if (provenUris.length > 0) {
    const vias = [...new Set(proven.flatMap((change) => (change.after ?? change.before)?.via ?? []))];
    const linked =
      vias.length === 0
        ? ''
        : ` (through ${vias
            .slice(0, 3)
            .map((via) => quoteText(via))
            .join(', ')})`;
    return {
      status: 'complete',
      value: true,
      rationale: `${capitalize(rule.criterion)} at ${where}: proven by ${listUris(provenUris)}${linked}.`,
      provenUris,
      unknownUris,
    };
  }
  const missing = (['baseline', 'final'] as const).filter((which) => {
    const status = which === 'baseline' ? changeSet.baselineAcquisition : changeSet.finalAcquisition;
    return status === 'unavailable' || status === 'error';
  });
  // An exact uri both manifests looked up on its own is hidden only by gaps naming it (SPEC §13): a budget
  // the walk ran out of elsewhere in the tree says nothing about it.
  const lookedUp = locator.match === 'exact' && changeSet.lookups?.includes(locator.uri) === true;
  const hidingGaps = [
    ...changeSet.coverage.gaps.filter((gap) =>
      lookedUp ? gap.uri === locator.uri : gapsCouldHide([gap], locator),
    ),
    ...(through?.gaps ?? []).filter((gap) =>
      lookedUp ? gap.uri === locator.uri : linkGapCouldHide(gap, locator),
    ),
  ];
  if (missing.length === 0 && unknownUris.length === 0 && hidingGaps.length === 0) {
    return {
      status: 'complete',
      value: false,
      rationale: `No ${rule.criterion.replace(/^a /, '')} at ${where}: both manifests cover it completely and show no such change.`,
      provenUris,
      unknownUris,
    };
  }
  const why: string[] = [];
  for (const which of missing) why.push(`the ${which} manifest was not taken`);
  if (hidingGaps.length > 0) {
    const reasons = [...new Set(hidingGaps.map((gap) => gap.reason))].join(', ');
    why.push(`gaps that could hide a matching entry: ${reasons}`);
  }
  if (unknownUris.length > 0) why.push(`change not decidable for ${listUris(unknownUris)}`);
  return { ...undetermined(`Undetermined ${question}: ${why.join('; ')}.`), unknownUris };
}

/**
 * `/uri (match) on the workspace`: the locator and the surface, as every rationale names them. The uri may
 * come from an imported record, so it is neutralized and cut (as in describeCondition).
 */
export function describeLocation(condition: {
  uri: string;
  match: string;
  surface?: string | undefined;
}): string {
  return `${neutralizeText(condition.uri, { maxChars: 200 })} (${condition.match}) on the ${condition.surface ?? 'workspace'}`;
}

/** Entry uris are names an agent chose: at most five, each a short quoted excerpt. */
export function listUris(uris: readonly string[]): string {
  const shown = uris
    .slice(0, 5)
    .map((uri) => quoteText(uri))
    .join(', ');
  return uris.length > 5 ? `${shown} and ${uris.length - 5} more` : shown;
}

function matches(locator: ParsedLocator, uri: string): boolean {
  return matchesLocator(locator, uri);
}

function undetermined(rationale: string): ChangeJudgement {
  return { status: 'undetermined', value: null, rationale, provenUris: [], unknownUris: [] };
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
