import type { Memory } from '../memory/memory.js';
import type { SurfaceChanges } from '../models/change-set.js';
import { type Condition, conditionSurface } from '../models/condition.js';
import { expectation } from '../models/expectation.js';
import type { Matcher } from '../models/matcher.js';
import type { Score } from '../models/score.js';
import {
  CHANGE_EVIDENCE_SCORER_TYPE,
  judgeAttemptCondition,
  singleCondition,
} from '../scorers/change-evidence-judgement.js';
import { judgementBounds } from '../scorers/file-write-judgement.js';

/**
 * Replays a score that `witness run` stored for an attempt (SPEC §12), offline: the attempt's stored
 * observation and manifests are judged again by the same rules — the bait rule, `executable`, the change
 * conditions — optionally with a new text matcher for a content_written condition. Returns null for a
 * score that was not decided with change evidence (an ordinary FileWriteScorer score), so the caller
 * replays it the ordinary way. The new score is stored beside the evidence it rests on.
 */
export async function replayAttemptScore(
  memory: Pick<Memory, 'listAttackResults' | 'observationsForScore' | 'saveScore'>,
  score: Score,
  matcher?: Matcher | undefined,
): Promise<Score | null> {
  if (score.scorer.type !== CHANGE_EVIDENCE_SCORER_TYPE) return null;
  const results = await memory.listAttackResults();
  const result = results.find((candidate) => candidate.scoreId === score.id);
  // Stored and validated with the attack result (AttackResultSchema.changes); absent before change evidence.
  const changes: SurfaceChanges[] = result?.changes ?? [];
  const observations = await memory.observationsForScore(score.id);
  let condition: Condition = singleCondition(score.scoredExpectation);
  if (
    matcher !== undefined &&
    (condition.conditionType === 'content_written' || condition.conditionType === 'request_sent')
  )
    condition = { ...condition, matcher };
  const surface = conditionSurface(condition);
  const replayed = judgeAttemptCondition({
    expectation: expectation([condition], score.scoredExpectation.objective),
    scorable: score.scorable,
    evidence: {
      observation: observations[0] ?? null,
      changes: changes.find((entry: SurfaceChanges) => entry.surface === surface) ?? null,
      // Stored with the attack result (SPEC §14): what the attempt sent, redacted as stored.
      network: result?.network ?? null,
    },
    source: score.scorer.children?.source ?? { type: 'unknown', version: '1', params: {} },
    bounds: judgementBounds({
      regexTimeoutMs: numberParam(score, 'regexTimeoutMs'),
      judgementTimeoutMs: numberParam(score, 'judgementTimeoutMs'),
    }),
    replayed: true,
  });
  await memory.saveScore(replayed, []);
  return replayed;
}

function numberParam(score: Score, name: string): number | undefined {
  const value = score.scorer.params[name];
  return typeof value === 'number' ? value : undefined;
}
