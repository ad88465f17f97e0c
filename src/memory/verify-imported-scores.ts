import { InvalidRecordError } from '../errors.js';
import type { Observation } from '../models/observation.js';
import type { Score } from '../models/score.js';
import { judgeContentWritten } from '../verdicts/content-written.js';
import type { ArchiveRecord } from './archive.js';

/**
 * Imported scores are judged again against the observations they rest on, and a contradiction is refused
 * (SPEC §7: a verdict is a pure function of its evidence). The attack this stops: an edited export whose
 * score says "complete TRUE, the agent wrote the hook" while its own observation proves the file absent,
 * so that `scores list` and every report built on the memory show a forged verdict.
 *
 * A score is checked when it rests on exactly one observation of this archive and holds `content_written`
 * conditions; scores decided without reading (no observation) carry no evidence to contradict. A
 * re-judgement that is undetermined only because a regex ran out of time is not a contradiction (time
 * bounds differ between machines). Observations are kept until the end of the archive, for the scores
 * that follow them.
 */
export async function* verifyImportedScores(
  records: AsyncIterable<ArchiveRecord>,
  name = 'export',
): AsyncGenerator<ArchiveRecord> {
  const observations = new Map<string, Observation>();
  for await (const entry of records) {
    if (entry.recordType === 'observation') observations.set(entry.record.id, entry.record);
    if (entry.recordType === 'score') {
      const problem = contradiction(entry.record, observations);
      if (problem !== undefined) {
        throw new InvalidRecordError(
          `${name}: score ${JSON.stringify(entry.record.id)} contradicts its evidence: ${problem}; nothing was imported`,
        );
      }
    }
    yield entry;
  }
}

function contradiction(score: Score, observations: ReadonlyMap<string, Observation>): string | undefined {
  const [observationId, ...more] = score.observationIds;
  if (observationId === undefined || more.length > 0) return undefined;
  const observation = observations.get(observationId);
  if (observation === undefined) return undefined;
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
