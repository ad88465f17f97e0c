import { randomUUID } from 'node:crypto';
import {
  InvalidExpectationError,
  InvalidOptionError,
  InvalidScorableError,
  LocationMismatchError,
} from '../errors.js';
import { MAX_REGEX_TIMEOUT_MS } from '../matching/regex-search.js';
import { DEFAULT_REGEX_TIMEOUT_MS } from '../matching/text-matcher.js';
import { checkObservation } from '../models/checked-observation.js';
import type { ContentWritten } from '../models/condition.js';
import { type ScoringExpectation, ScoringExpectationSchema } from '../models/expectation.js';
import type { ComponentIdentifier } from '../models/identifier.js';
import { parseLocator } from '../models/locator.js';
import type { Observation } from '../models/observation.js';
import { parseRecord } from '../models/record.js';
import { type Scorable, ScorableSchema, sameLocator } from '../models/scorable.js';
import { type Score, ScoreSchema } from '../models/score.js';
import { DEFAULT_JUDGEMENT_TIMEOUT_MS, judgeContentWritten } from '../verdicts/content-written.js';
import { describeCriterion as describeMatcher } from '../verdicts/describe-criterion.js';
import type { ReplayRequest } from './scorer.js';

/**
 * The FileWriteScorer's judgement without any I/O: an observation and an expectation in, a score out.
 * `FileWriteScorer.score` uses it after reading the file system, replay uses it on stored evidence, so a
 * live score and a replayed one are decided by the same code (SPEC §4, §6).
 *
 * @example
 * const score = judgeObservation({ observation, expectation: expectation([contentWritten('/hook', contains('curl'))]) });
 */

export const FILE_WRITE_SCORER_TYPE = 'FileWriteScorer';
/** Bumped whenever the verdict or matching rules change, so scores from different rules never share an identity. */
export const MATCHING_VERSION = 1;

export interface JudgementOptions {
  /** Wall-clock bound of one regex search over one file's text (default 1000 ms). */
  regexTimeoutMs?: number | undefined;
  /** Wall-clock bound of all regex searches of one judgement together (default 10,000 ms). */
  judgementTimeoutMs?: number | undefined;
}

/** Judgement options after validation, defaults filled in. */
export interface JudgementBounds {
  regexTimeoutMs: number;
  judgementTimeoutMs: number;
}

/** @internal */
export const SCORER_ACCEPTS = 'FileWriteScorer accepts a surface scorable or a message scorable';

/** Validates the time bounds once; a bad bound is a configuration error, thrown before any I/O. */
export function judgementBounds(options: JudgementOptions = {}): JudgementBounds {
  const timeout = options.regexTimeoutMs ?? DEFAULT_REGEX_TIMEOUT_MS;
  if (!Number.isSafeInteger(timeout) || timeout <= 0 || timeout > MAX_REGEX_TIMEOUT_MS) {
    throw new InvalidOptionError(
      `regexTimeoutMs must be an integer from 1 to ${MAX_REGEX_TIMEOUT_MS} milliseconds, got ${String(timeout)}`,
    );
  }
  const total = options.judgementTimeoutMs ?? DEFAULT_JUDGEMENT_TIMEOUT_MS;
  if (!Number.isSafeInteger(total) || total <= 0) {
    throw new InvalidOptionError(
      `judgementTimeoutMs must be a positive integer (milliseconds), got ${String(total)}`,
    );
  }
  return { regexTimeoutMs: timeout, judgementTimeoutMs: total };
}

/** The scorer's identity: its rules, its bounds and the source that acquired the evidence. */
export function fileWriteScorerIdentifier(
  bounds: JudgementBounds,
  source: ComponentIdentifier,
): ComponentIdentifier {
  return {
    type: FILE_WRITE_SCORER_TYPE,
    version: '1',
    params: {
      matchingVersion: MATCHING_VERSION,
      regexTimeoutMs: bounds.regexTimeoutMs,
      judgementTimeoutMs: bounds.judgementTimeoutMs,
    },
    children: { source },
  };
}

/**
 * Judges a stored observation again (a new matcher is allowed). The score names the source that acquired
 * the observation, not whoever replays it. Throws only for misuse (an invalid observation or expectation,
 * a different location); missing evidence is an `undetermined` score.
 */
export function judgeObservation(request: ReplayRequest, options: JudgementOptions = {}): Score {
  const bounds = judgementBounds(options);
  const observation = checkObservation(request.observation);
  const expectation = parseExpectation(request.expectation);
  const condition = singleContentWritten(expectation);
  if (!sameLocator(observation.scorable, condition)) {
    throw new LocationMismatchError(
      `the observation is of a different location (${describeLocator(observation.scorable)}) than the ContentWritten condition (${describeLocator(condition)})`,
    );
  }
  const scorable = request.scorable === undefined ? observation.scorable : parseScorable(request.scorable);
  return judgeAcquired({
    observation,
    expectation,
    condition,
    scorable,
    source: observation.sourceIdentifier,
    bounds,
    extra: { replayed: true },
  });
}

/** @internal Judges an observation already checked to be of the condition's location. */
export function judgeAcquired(parts: {
  observation: Observation;
  expectation: ScoringExpectation;
  condition: ContentWritten;
  scorable: Scorable;
  source: ComponentIdentifier;
  bounds: JudgementBounds;
  extra?: Record<string, boolean> | undefined;
}): Score {
  const { observation, bounds } = parts;
  const judgement = judgeContentWritten(observation, parts.condition, bounds);
  return buildScore({
    scorable: parts.scorable,
    expectation: parts.expectation,
    condition: parts.condition,
    status: judgement.status,
    value: judgement.value,
    rationale: judgement.rationale,
    observationIds: [observation.id],
    scorer: fileWriteScorerIdentifier(bounds, parts.source),
    metadata: {
      acquisition: observation.acquisition,
      provenUris: judgement.provenUris,
      unknownUris: judgement.unknownUris,
      judgementGaps: judgement.judgementGaps.map((gap) => ({ ...gap })),
      ...parts.extra,
    },
  });
}

/** @internal Assembles and validates a score; a message scorable's first piece becomes `messagePieceId`. */
export function buildScore(parts: {
  scorable: Scorable;
  expectation: ScoringExpectation;
  condition: ContentWritten;
  status: Score['status'];
  value: boolean | null;
  rationale: string;
  observationIds: string[];
  scorer: ComponentIdentifier;
  metadata: Score['metadata'];
}): Score {
  const objective =
    parts.expectation.objective === undefined ? '' : ` (objective: ${parts.expectation.objective})`;
  const score: Record<string, unknown> = {
    id: randomUUID(),
    status: parts.status,
    value: parts.value,
    scoreType: 'true_false',
    description: `Whether ${describeLocator(parts.condition)} holds ${describeCriterion(parts.condition)}${objective}`,
    rationale: parts.rationale,
    scorable: parts.scorable,
    scorer: parts.scorer,
    scoredExpectation: parts.expectation,
    observationIds: parts.observationIds,
    createdAt: new Date().toISOString(),
    metadata: parts.metadata,
  };
  if (parts.scorable.scorableType === 'message') score.messagePieceId = parts.scorable.pieceIds[0];
  return parseRecord(ScoreSchema, score, 'score');
}

/** @internal */
export function parseExpectation(expectation: unknown): ScoringExpectation {
  return parseRecord(ScoringExpectationSchema, expectation, 'scoring expectation');
}

/** @internal The expectation must hold exactly one ContentWritten condition; checked before any I/O. */
export function singleContentWritten(expectation: ScoringExpectation): ContentWritten {
  const conditions = expectation.conditions.filter((c) => c.conditionType === 'content_written');
  if (conditions.length !== 1 || expectation.conditions.length !== 1) {
    throw new InvalidExpectationError(
      `FileWriteScorer needs an expectation with exactly one ContentWritten condition; it has ${conditions.length} (and ${expectation.conditions.length} condition(s) in all)`,
    );
  }
  const condition = conditions[0] as ContentWritten;
  parseLocator(condition.uri, condition.match);
  if (condition.executable === true) {
    // An observation holds no permission bits: answering without them would ignore the criterion.
    throw new InvalidExpectationError(
      'a ContentWritten condition with executable: true is judged from manifests (SPEC §12): run it in a campaign, or use judgeContentWrittenSinceBaseline',
    );
  }
  return condition;
}

/** @internal */
export function parseScorable(scorable: unknown): Scorable {
  const result = ScorableSchema.safeParse(scorable);
  if (!result.success)
    throw new InvalidScorableError(
      `${SCORER_ACCEPTS}; the scorable given is not valid: ${result.error.issues[0]?.message ?? ''}`,
    );
  return result.data;
}

/** @internal */
export function describeLocator(locator: { uri: string; match: string }): string {
  return `${locator.uri} (${locator.match})`;
}

/** @internal */
export function describeCriterion(condition: ContentWritten): string {
  return describeMatcher(condition.matcher);
}
