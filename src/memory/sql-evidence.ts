import { InvalidReferenceError, NotFoundError } from '../errors.js';
import { type Observation, ObservationSchema } from '../models/observation.js';
import { parseRecord } from '../models/record.js';
import { type Score, ScoreSchema } from '../models/score.js';
import { loadObservations } from './evidence-contents.js';
import type { ScoreFilter } from './memory.js';
import type { SqlContext } from './sql-context.js';
import { parseStoredRows, storeObservation, storeScore } from './store-records.js';

/** The evidence aggregate (internal): observations, scores, and the links between them. */
export class SqlEvidence {
  readonly #sql: SqlContext;

  constructor(sql: SqlContext) {
    this.#sql = sql;
  }

  async saveScore(score: Score, observations: readonly Observation[]): Promise<void> {
    const record = parseRecord(ScoreSchema, score, 'score');
    const evidence = observations.map((observation) =>
      parseRecord(ObservationSchema, observation, 'observation'),
    );
    const named = new Set(record.observationIds);
    for (const observation of evidence) {
      if (!named.has(observation.id)) {
        throw new InvalidReferenceError(
          `observation ${JSON.stringify(observation.id)} is not among the observationIds of score ${JSON.stringify(record.id)}; pass only the observations the score rests on`,
        );
      }
    }
    const linkedPieces = record.scorable.scorableType === 'message' ? record.scorable.pieceIds : [];
    await this.#sql.write(async (trx) => {
      for (const observation of evidence) await storeObservation(trx, observation, linkedPieces);
      await storeScore(trx, record);
    });
  }

  async getObservation(id: string): Promise<Observation> {
    const observation = await this.#sql.read(async (db) => {
      const row = await db
        .selectFrom('observations')
        .select(['id', 'record_json', 'parts'])
        .where('id', '=', id)
        .executeTakeFirst();
      return row === undefined ? undefined : (await loadObservations(db, [row]))[0];
    });
    if (observation === undefined) throw new NotFoundError(`observation ${JSON.stringify(id)} is not stored`);
    return observation;
  }

  async messagePiecesForObservation(observationId: string): Promise<string[]> {
    await this.getObservation(observationId);
    const rows = await this.#sql.read((db) =>
      db
        .selectFrom('observation_message_pieces')
        .select('piece_id')
        .where('observation_id', '=', observationId)
        .orderBy('position')
        .execute(),
    );
    return rows.map((row) => row.piece_id);
  }

  async getScore(id: string): Promise<Score> {
    const [score] = await this.#sql.read(async (db) =>
      parseStoredRows(
        db,
        ScoreSchema,
        await db.selectFrom('scores').select(['record_json', 'parts']).where('id', '=', id).execute(),
        `score ${id}`,
      ),
    );
    if (score === undefined) throw new NotFoundError(`score ${JSON.stringify(id)} is not stored`);
    return score;
  }

  async listScores(filter: ScoreFilter = {}): Promise<Score[]> {
    return this.#sql.read(async (db) => {
      let query = db.selectFrom('scores').select(['record_json', 'parts']);
      if (filter.status !== undefined) query = query.where('status', '=', filter.status);
      const observationId = filter.observationId;
      if (observationId !== undefined) {
        query = query.where(({ exists, selectFrom }) =>
          exists(
            selectFrom('score_observations')
              .select('score_observations.score_id')
              .whereRef('score_observations.score_id', '=', 'scores.id')
              .where('score_observations.observation_id', '=', observationId),
          ),
        );
      }
      const conversationId = filter.conversationId;
      if (conversationId !== undefined) {
        query = query.where(({ exists, selectFrom }) =>
          exists(
            selectFrom('score_message_pieces')
              .innerJoin('message_pieces', 'message_pieces.id', 'score_message_pieces.piece_id')
              .select('score_message_pieces.score_id')
              .whereRef('score_message_pieces.score_id', '=', 'scores.id')
              .where('message_pieces.conversation_id', '=', conversationId),
          ),
        );
      }
      query = query.orderBy('created_at').orderBy('id');
      if (filter.limit !== undefined) query = query.limit(filter.limit);
      return parseStoredRows(db, ScoreSchema, await query.execute(), 'score');
    });
  }

  async observationsForScore(scoreId: string): Promise<Observation[]> {
    await this.getScore(scoreId);
    return this.#sql.read(async (db) =>
      loadObservations(
        db,
        await db
          .selectFrom('score_observations')
          .innerJoin('observations', 'observations.id', 'score_observations.observation_id')
          .select(['observations.id', 'observations.record_json', 'observations.parts'])
          .where('score_observations.score_id', '=', scoreId)
          .orderBy('score_observations.position')
          .execute(),
      ),
    );
  }
}
