import type { attemptLabel } from '../attacks/outcome.js';
import type { ComponentIdentifier } from '../models/identifier.js';
import type { Score } from '../models/score.js';
import type { Containment } from '../models/vocabulary.js';
import { neutralizeText } from '../text/quote-text.js';

/**
 * The words for an attempt's parts, one renderer per concept, used by the terminal table, the report, the
 * viewer and JUnit alike, so an attempt reads the same wherever a person meets it: how it ended
 * (`attemptLabel`, attacks/outcome.ts), what the file system showed ({@link verdictText}), what it ran against
 * ({@link describeTarget}) and how it was contained ({@link containmentWord}). Plain text, neutralized;
 * HTML escapes it again when it builds a page.
 */

/** How an attempt ended, as every output names it: `attemptLabel` (`success`, …, `control_tripped`). */
export type OutcomeLabel = ReturnType<typeof attemptLabel>;

/**
 * The file system's verdict on the attempt's (first) condition and where it looked: `WRITTEN
 * /.git/hooks/pre-commit`, `not created /x`, `undetermined /config.json`, `not judged`. A proven condition
 * is upper-case: it is what a reader scans for.
 */
export function verdictText(score: Pick<Score, 'status' | 'value' | 'scoredExpectation'> | null): string {
  if (score === null) return 'not judged';
  const condition = score.scoredExpectation.conditions[0] as
    | { conditionType: string; uri?: string | undefined; host?: string | undefined }
    | undefined;
  // Where the condition looked: a file's uri, or a request's host (SPEC §14).
  const place =
    condition === undefined
      ? undefined
      : condition.conditionType === 'request_sent'
        ? (condition.host ?? 'any host')
        : condition.uri;
  const where = place === undefined ? '' : ` ${neutralizeText(place, { maxChars: 80 })}`;
  if (score.status === 'undetermined') return `undetermined${where}`;
  const [yes, no] = VERDICT_WORDS[condition?.conditionType ?? 'content_written'] ?? ['TRUE', 'false'];
  return `${score.value ? yes : no}${where}`;
}

/** The verdict of each condition type, proven and disproven. A type without words reads TRUE / false. */
const VERDICT_WORDS: Readonly<Record<string, readonly [string, string]>> = {
  content_written: ['WRITTEN', 'not written'],
  file_created: ['CREATED', 'not created'],
  file_deleted: ['DELETED', 'not deleted'],
  file_modified: ['MODIFIED', 'not modified'],
  request_sent: ['SENT', 'not sent'],
};

/**
 * What a run was against: `AgentTarget(planner=MockPlanner(mode=vulnerable), toolbox=FileToolbox())` —
 * the component's type, its scalar parameters, then its parts (an agent's planner and toolbox).
 */
export function describeTarget(target: ComponentIdentifier): string {
  return neutralizeText(describeComponent(target), { maxChars: 400 });
}

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

/** How an attempt was contained, in a word: `bwrap`, `NONE` (not sandboxed), `in-process`. */
export function containmentWord(containment: Containment | string | undefined | null): string {
  if (containment === undefined || containment === null) return '';
  return CONTAINMENT_WORDS[containment] ?? neutralizeText(containment, { maxChars: 20 });
}

const CONTAINMENT_WORDS: Readonly<Record<string, string>> = {
  bwrap: 'bwrap',
  none: 'NONE',
  in_process: 'in-process',
};

/** What each containment means (SPEC §11), for a page that has room to say it. */
export function containmentMeaning(containment: Containment): string {
  return CONTAINMENT_MEANINGS[containment] ?? '';
}

const CONTAINMENT_MEANINGS: Readonly<Record<string, string>> = {
  bwrap: 'sandboxed: own PID namespace, host read-only, every process ended before judging',
  none: 'NOT sandboxed (the campaign said sandbox: none): session killed and processes scanned only',
  in_process: 'the agent ran inside Witness with file tools confined to the workspace',
};
