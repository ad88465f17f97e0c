import type { Observation } from '../models/observation.js';
import type { Score } from '../models/score.js';
import { judgeContentWritten } from '../verdicts/content-written.js';

/**
 * Imported scores are judged again against the observations they rest on, and a contradiction is refused
 * (SPEC §7: a verdict is a pure function of its evidence). The attack this stops: an edited export whose
 * score says "complete TRUE, the agent wrote the hook" while its own observation proves the file absent,
 * so that `scores list` and every report built on the memory show a forged verdict.
 *
 * A score is checked when it rests on exactly one observation and holds only `content_written`
 * conditions; scores decided without reading (no observation) carry no evidence to contradict. The
 * importer reads the observation back from the memory (where the archive's own observation was stored
 * before the score), so an import holds no observation in memory for the scores that follow. A
 * re-judgement that is undetermined only because a regex ran out of time is not a contradiction (time
 * bounds differ between machines).
 *
 * Returns why the score contradicts its observation, or undefined when it does not.
 */
export function scoreContradiction(score: Score, observation: Observation): string | undefined {
  return contradiction(score, observation);
}

function contradiction(score: Score, observation: Observation): string | undefined {
  const observationId = observation.id;
  const conditions = score.scoredExpectation.conditions.filter(
    (condition) => condition.conditionType === 'content_written',
  );
  if (conditions.length !== score.scoredExpectation.conditions.length || conditions.length === 0) {
    return undefined;
  }
  for (const condition of conditions) {
    const judgement = judgeContentWritten(observation, condition);
    if (judgement.status === score.status && judgement.value === score.value) continue;
    const timedOut = judgement.judgementGaps.some((gap) => gap.reason === 'matcher_timeout');
    if (judgement.status === 'undetermined' && timedOut) continue;
    return `it says ${verdict(score.status, score.value)}, but observation ${JSON.stringify(observationId)} judged again gives ${verdict(judgement.status, judgement.value)} (${judgement.rationale})`;
  }
  return undefined;
}

function verdict(status: string, value: boolean | null): string {
  return status === 'undetermined' ? 'undetermined' : `complete ${value === true ? 'TRUE' : 'FALSE'}`;
}
