import { createHash } from 'node:crypto';
import { DEFAULT_REGEX_TIMEOUT_MS, type MatchTextOptions, matchText } from '../matching/text-matcher.js';
import type { ContentWritten } from '../models/condition.js';
import { howToRaise, LIMIT_OF_GAP, type LimitName } from '../models/evidence-limits.js';
import type { Matcher } from '../models/matcher.js';
import type { CoverageGap, Observation, SurfaceEntry } from '../models/observation.js';
import type { GapReason } from '../models/vocabulary.js';
import { neutralizeText, quoteText } from '../text/quote-text.js';
import { describeCriterion } from './describe-criterion.js';

/**
 * The verdict rule for `content_written` (SPEC §4). Pure: it reads the observation, never the file system.
 *
 * What counts as proof: an entry with nonempty content (no matcher), or whose text the matcher accepts
 * (a `contains` found in a truncated prefix counts; `equals`/`regex` on a truncated prefix never does,
 * since a later byte could change the answer). Any proof gives `true`, even under a partial read.
 * `false` needs a complete acquisition, complete coverage and no entry whose answer is unknown.
 * Everything else is `undetermined`.
 */

export interface ContentWrittenJudgement {
  status: 'complete' | 'undetermined';
  value: boolean | null;
  rationale: string;
  provenUris: string[];
  unknownUris: string[];
  /** Gaps found while judging (a regex that timed out on an entry). */
  judgementGaps: CoverageGap[];
}

/** Wall-clock bound of judging one observation, all regex searches together (default 10 s). */
export const DEFAULT_JUDGEMENT_TIMEOUT_MS = 10_000;

export interface JudgeOptions extends MatchTextOptions {
  /**
   * Bound on all regex searches of one judgement together. Each search is bounded by regexTimeoutMs, but a
   * glob can hold a thousand files an attacker filled for a catastrophic pattern: without a total, that
   * is minutes of blocked thread. Entries left when it is spent are unknown (`matcher_timeout`).
   */
  judgementTimeoutMs?: number;
}

type EntryOutcome =
  | 'proven'
  | 'not_proven'
  | 'unknown_binary'
  | 'unknown_not_text'
  | 'unknown_truncated'
  | 'timeout';

export function judgeContentWritten(
  observation: Observation,
  condition: ContentWritten,
  options: JudgeOptions = {},
): ContentWrittenJudgement {
  const locator = describeLocator(condition);
  const criterion = describeCriterion(condition.matcher);
  const coverage = observation.payload.coverage;

  if (observation.acquisition === 'unavailable' || observation.acquisition === 'error') {
    return {
      status: 'undetermined',
      value: null,
      rationale: `Undetermined whether ${locator} holds ${criterion}: the acquisition was ${observation.acquisition} (${describeReasons(coverage.reasons)}).`,
      provenUris: [],
      unknownUris: [],
      judgementGaps: [],
    };
  }

  const { provenUris, unknownUris, judgementGaps, truncatedUris, notText, prefixOnly } = judgeEntries(
    observation,
    condition.matcher,
    options,
  );

  if (provenUris.length > 0) {
    return {
      status: 'complete',
      value: true,
      rationale: `${locator} holds ${criterion}: proven by ${listUris(provenUris)}.`,
      provenUris,
      unknownUris,
      judgementGaps,
    };
  }
  if (observation.acquisition === 'complete' && coverage.complete && unknownUris.length === 0) {
    const found =
      observation.payload.entries.length === 0
        ? 'no file exists there'
        : `${observation.payload.entries.length} file(s) examined, none matching`;
    return {
      status: 'complete',
      value: false,
      rationale: `${locator} does not hold ${criterion}: the read was complete and ${found}.`,
      provenUris,
      unknownUris,
      judgementGaps,
    };
  }
  const why = whyUndetermined(observation, judgementGaps, truncatedUris, notText, prefixOnly);
  return {
    status: 'undetermined',
    value: null,
    rationale: `Undetermined whether ${locator} holds ${criterion}: ${why.join('; ')}.`,
    provenUris,
    unknownUris,
    judgementGaps,
  };
}

/** Each entry judged within the judgement's total time bound: the proven, the unknown and why. */
function judgeEntries(observation: Observation, matcher: Matcher | undefined, options: JudgeOptions) {
  const provenUris: string[] = [];
  const unknownUris: string[] = [];
  const judgementGaps: CoverageGap[] = [];
  const truncatedUris: string[] = [];
  let notText = false;
  let prefixOnly = false;
  const perSearchMs = options.regexTimeoutMs ?? DEFAULT_REGEX_TIMEOUT_MS;
  const deadline = performance.now() + (options.judgementTimeoutMs ?? DEFAULT_JUDGEMENT_TIMEOUT_MS);
  for (const entry of observation.payload.entries) {
    const leftMs = Math.ceil(deadline - performance.now());
    const outcome = judgeEntry(entry, matcher, Math.min(perSearchMs, leftMs));
    if (outcome === 'proven') provenUris.push(entry.uri);
    else if (outcome !== 'not_proven') {
      unknownUris.push(entry.uri);
      if (outcome === 'timeout') judgementGaps.push({ reason: 'matcher_timeout', uri: entry.uri });
      if (outcome === 'unknown_truncated') truncatedUris.push(entry.uri);
      if (outcome === 'unknown_binary') notText = true;
      if (outcome === 'unknown_not_text') prefixOnly = true;
    }
  }
  return { provenUris, unknownUris, judgementGaps, truncatedUris, notText, prefixOnly };
}

/**
 * Why the evidence decides nothing: its gaps, content not kept in full or not text, and the budget that
 * made it partial with how to raise it, in every spelling.
 */
function whyUndetermined(
  observation: Observation,
  judgementGaps: readonly CoverageGap[],
  truncatedUris: readonly string[],
  notText: boolean,
  prefixOnly: boolean,
): string[] {
  const why: string[] = [];
  const reasons: GapReason[] = [...observation.payload.coverage.reasons];
  if (judgementGaps.length > 0) reasons.push('matcher_timeout');
  if (reasons.length > 0) why.push(`gaps: ${describeReasons(reasons)}`);
  if (truncatedUris.length > 0)
    why.push(`content not retained in full (${listTruncated(observation, truncatedUris)})`);
  if (notText) why.push('content is not UTF-8 text');
  if (prefixOnly) {
    why.push(
      'content is not text (not UTF-8, or holding a NUL byte): only its length, digest and a prefix are kept',
    );
  }
  const budgets = new Set<LimitName>();
  for (const reason of reasons) {
    const limit = LIMIT_OF_GAP[reason];
    if (limit !== undefined) budgets.add(limit);
  }
  if (truncatedUris.length > 0 && !reasons.includes('read_limit_exceeded')) budgets.add('maxContentBytes');
  for (const limit of budgets) why.push(howToRaise(limit));
  return why;
}

function judgeEntry(entry: SurfaceEntry, matcher: Matcher | undefined, searchMs: number): EntryOutcome {
  if (matcher === undefined) return entry.sizeBytes > 0 ? 'proven' : 'not_proven';
  const byDigest = equalsByDigest(entry, matcher);
  if (byDigest !== undefined) return byDigest;
  if (entry.content === null) return 'unknown_binary';
  if (entry.notText === true) {
    // Only a prefix of a file that is not text is kept (SPEC §13): a `contains` found there proves, and
    // nothing else is told from it.
    if (matcher.matcherType !== 'contains') return 'unknown_not_text';
    return matchText(matcher, entry.content) === 'match' ? 'proven' : 'unknown_not_text';
  }
  if (entry.contentTruncated) {
    if (matcher.matcherType !== 'contains') return 'unknown_truncated';
    return matchText(matcher, entry.content) === 'match' ? 'proven' : 'unknown_truncated';
  }
  if (matcher.matcherType === 'regex' && searchMs < 1) return 'timeout';
  const outcome = matchText(matcher, entry.content, { regexTimeoutMs: searchMs });
  if (outcome === 'match') return 'proven';
  return outcome === 'timeout' ? 'timeout' : 'not_proven';
}

/**
 * An exact `equals` (case-sensitive, whitespace kept) on a file read in full whose text was not kept in
 * full: the file holds exactly that text when its bytes are the text's UTF-8, so its size and digest
 * decide it. Undefined when they cannot (another matcher, folding or trimming, no digest, the text
 * kept whole).
 */
function equalsByDigest(entry: SurfaceEntry, matcher: Matcher): 'proven' | 'not_proven' | undefined {
  if (matcher.matcherType !== 'equals' || !matcher.caseSensitive || matcher.ignoreWhitespace)
    return undefined;
  if (entry.sha256 === null || (entry.content !== null && !entry.contentTruncated)) return undefined;
  const bytes = Buffer.from(matcher.value, 'utf8');
  if (bytes.length !== entry.sizeBytes) return 'not_proven';
  return createHash('sha256').update(bytes).digest('hex') === entry.sha256 ? 'proven' : 'not_proven';
}

function describeReasons(reasons: readonly string[]): string {
  return reasons.length === 0 ? 'no reason recorded' : [...new Set(reasons)].join(', ');
}

/** Entry uris are file names an attacker chose: at most five, each a short quoted excerpt. */
function listUris(uris: readonly string[]): string {
  const shown = uris
    .slice(0, 5)
    .map((uri) => quoteText(uri))
    .join(', ');
  return uris.length > 5 ? `${shown} and ${uris.length - 5} more` : shown;
}

/** Truncated entries with how much of each was kept: "/a": 64 of 210 bytes kept. */
function listTruncated(observation: Observation, uris: readonly string[]): string {
  const shown = uris.slice(0, 5).map((uri) => {
    const entry = observation.payload.entries.find((candidate) => candidate.uri === uri);
    const kept =
      entry?.content === null || entry === undefined ? 0 : Buffer.byteLength(entry.content, 'utf8');
    return `${quoteText(uri)}: ${kept} of ${entry?.sizeBytes ?? 0} bytes kept`;
  });
  return uris.length > 5 ? `${shown.join(', ')} and ${uris.length - 5} more` : shown.join(', ');
}

/** The condition's locator; the uri may come from an imported record, so it is neutralized and cut. */
function describeLocator(condition: ContentWritten): string {
  return `${neutralizeText(condition.uri, { maxChars: 200 })} (${condition.match})`;
}
