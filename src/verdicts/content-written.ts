import { type MatchTextOptions, matchText } from '../matching/text-matcher.js';
import type { ContentWritten } from '../models/condition.js';
import type { Matcher } from '../models/matcher.js';
import type { CoverageGap, Observation, SurfaceEntry } from '../models/observation.js';
import type { GapReason } from '../models/vocabulary.js';
import { quoteExcerpt } from './excerpt.js';

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

type EntryOutcome = 'proven' | 'not_proven' | 'unknown_binary' | 'unknown_truncated' | 'timeout';

export function judgeContentWritten(
  observation: Observation,
  condition: ContentWritten,
  options: MatchTextOptions = {},
): ContentWrittenJudgement {
  const locator = `${condition.uri} (${condition.match})`;
  const criterion =
    condition.matcher === undefined ? 'nonempty content' : 'content matching the expected text criterion';
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

  const provenUris: string[] = [];
  const unknownUris: string[] = [];
  const judgementGaps: CoverageGap[] = [];
  const truncatedUris: string[] = [];
  let notText = false;
  for (const entry of observation.payload.entries) {
    const outcome = judgeEntry(entry, condition.matcher, options);
    if (outcome === 'proven') provenUris.push(entry.uri);
    else if (outcome !== 'not_proven') {
      unknownUris.push(entry.uri);
      if (outcome === 'timeout') judgementGaps.push({ reason: 'matcher_timeout', uri: entry.uri });
      if (outcome === 'unknown_truncated') truncatedUris.push(entry.uri);
      if (outcome === 'unknown_binary') notText = true;
    }
  }

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
  const why: string[] = [];
  const reasons: GapReason[] = [...coverage.reasons];
  if (judgementGaps.length > 0) reasons.push('matcher_timeout');
  if (reasons.length > 0) why.push(`gaps: ${describeReasons(reasons)}`);
  if (truncatedUris.length > 0) why.push(`content not retained in full (${listUris(truncatedUris)})`);
  if (notText) why.push('content is not UTF-8 text');
  return {
    status: 'undetermined',
    value: null,
    rationale: `Undetermined whether ${locator} holds ${criterion}: ${why.join('; ')}.`,
    provenUris,
    unknownUris,
    judgementGaps,
  };
}

function judgeEntry(
  entry: SurfaceEntry,
  matcher: Matcher | undefined,
  options: MatchTextOptions,
): EntryOutcome {
  if (matcher === undefined) return entry.sizeBytes > 0 ? 'proven' : 'not_proven';
  if (entry.content === null) return 'unknown_binary';
  if (entry.contentTruncated) {
    if (matcher.matcherType !== 'contains') return 'unknown_truncated';
    return matchText(matcher, entry.content, options) === 'match' ? 'proven' : 'unknown_truncated';
  }
  const outcome = matchText(matcher, entry.content, options);
  if (outcome === 'match') return 'proven';
  return outcome === 'timeout' ? 'timeout' : 'not_proven';
}

function describeReasons(reasons: readonly string[]): string {
  return reasons.length === 0 ? 'no reason recorded' : [...new Set(reasons)].join(', ');
}

/** Entry uris are file names an attacker chose: at most five, each a short quoted excerpt. */
function listUris(uris: readonly string[]): string {
  const shown = uris
    .slice(0, 5)
    .map((uri) => quoteExcerpt(uri))
    .join(', ');
  return uris.length > 5 ? `${shown} and ${uris.length - 5} more` : shown;
}
