import { CompiledQuery, type Transaction } from 'kysely';
import PgBoss from 'pg-boss';
import type { Tables } from '../memory/tables.js';
import { ATTEMPT_QUEUE, BOSS_SCHEMA } from './queue-store.js';

/** Tries at creating the attempt queue before a start fails (see startBoss). */
const CREATE_QUEUE_TRIES = 5;

/**
 * pg-boss in its own schema (`witness_boss`, created and migrated by pg-boss itself on start). Submitters
 * and `runs` commands do no maintenance; workers supervise, which is what expires the active job of a
 * killed worker (every `maintenanceIntervalSeconds`) and puts it back for another worker.
 */
export async function startBoss(
  url: string,
  options: { supervise: boolean; maintenanceIntervalSeconds?: number; retryLimit?: number },
): Promise<PgBoss> {
  const boss = new PgBoss({
    connectionString: url,
    schema: BOSS_SCHEMA,
    max: 4,
    supervise: options.supervise,
    schedule: false,
    ...(options.maintenanceIntervalSeconds === undefined
      ? {}
      : { maintenanceIntervalSeconds: options.maintenanceIntervalSeconds }),
  });
  // A lost connection is reported by the next call; it must not crash the process.
  boss.on('error', () => {});
  await boss.start();
  try {
    for (let attempt = 1; (await boss.getQueue(ATTEMPT_QUEUE)) === null; attempt++) {
      try {
        await boss.createQueue(ATTEMPT_QUEUE, { name: ATTEMPT_QUEUE, retryLimit: options.retryLimit ?? 3 });
      } catch (error) {
        // Other processes creating it at the same moment: one of them made it (the check above sees it), or
        // PostgreSQL broke a deadlock between them by failing this one (seen with three workers starting
        // together on a fresh database) and the next try finds it made or makes it.
        if (attempt >= CREATE_QUEUE_TRIES) throw error;
        await new Promise((resolve) => setTimeout(resolve, 25 * attempt));
      }
    }
  } catch (error) {
    // A started boss supervises on timers: left running, it would keep a failed process alive for ever.
    await boss.stop({ graceful: false, wait: true }).catch(() => {});
    throw error;
  }
  return boss;
}

/** pg-boss's statements run inside our transaction (its `db` option), so they commit or roll back with it. */
export function bossIn(trx: Transaction<Tables>): PgBoss.Db {
  return {
    executeSql: async (text, values) => {
      const result = await trx.executeQuery(CompiledQuery.raw(text, values));
      return { rows: result.rows as unknown[] };
    },
  };
}
