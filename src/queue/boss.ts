import PgBoss from 'pg-boss';
import { ATTEMPT_QUEUE, BOSS_SCHEMA } from './queue-store.js';

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
  if ((await boss.getQueue(ATTEMPT_QUEUE)) === null) {
    try {
      await boss.createQueue(ATTEMPT_QUEUE, { name: ATTEMPT_QUEUE, retryLimit: options.retryLimit ?? 3 });
    } catch (error) {
      // Another process created it between the check and the create.
      if ((await boss.getQueue(ATTEMPT_QUEUE)) === null) throw error;
    }
  }
  return boss;
}
