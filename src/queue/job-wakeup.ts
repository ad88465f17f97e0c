import { sql } from 'kysely';
import pg from 'pg';
import type { QueueDb } from './queue-store.js';

/**
 * Idle workers are woken by PostgreSQL `LISTEN`/`NOTIFY` instead of waiting out their poll interval: a
 * submitter notifies {@link ATTEMPTS_CHANNEL} once its jobs are inserted, and a worker handing a job back
 * notifies too, so a sleeping worker fetches at once. Polling stays the fallback and the only guarantee:
 * a notification can be lost (the listening connection dropped, a job expired by pg-boss's maintenance,
 * which notifies nobody), and then the job is found at the next poll. A lost listener is reopened at the
 * next wait, at most once per poll interval; until then the worker simply polls.
 *
 * Waiting is by generation: a slot reads {@link JobWakeup.generation} before it fetches and waits only if
 * no notification arrived since, so a NOTIFY that lands between an empty fetch and the wait is not missed.
 */

export const ATTEMPTS_CHANNEL = 'witness_attempts';

/** Tells listening workers that attempts may be waiting (delivered when the caller's statement commits). */
export async function notifyAttemptsWaiting(db: QueueDb): Promise<void> {
  await sql`select pg_notify(${ATTEMPTS_CHANNEL}, '')`.execute(db);
}

export interface JobWakeup {
  /** Opens the listening connection (a failure is not an error: the worker polls). */
  start(): Promise<void>;
  /** Counts notifications received; compare before a fetch and after. */
  generation(): number;
  /**
   * Resolves after `ms`, on the next notification, or on abort — whichever comes first; at once when
   * `since` is given and a notification arrived after it.
   */
  wait(ms: number, signal: AbortSignal, since?: number): Promise<void>;
  /** True while the listening connection is up. */
  listening(): boolean;
  close(): Promise<void>;
}

export function createJobWakeup(
  url: string,
  options: { reopenAfterMs: number; enabled: boolean },
): JobWakeup {
  let generation = 0;
  let client: pg.Client | undefined;
  let connecting: Promise<void> | undefined;
  let lastAttempt = Number.NEGATIVE_INFINITY;
  let closed = false;
  const waiters = new Set<() => void>();

  const wakeAll = () => {
    generation++;
    for (const wake of [...waiters]) wake();
  };

  const open = (): Promise<void> => {
    if (!options.enabled || closed || client !== undefined || connecting !== undefined)
      return connecting ?? Promise.resolve();
    if (performance.now() - lastAttempt < options.reopenAfterMs) return Promise.resolve();
    lastAttempt = performance.now();
    const candidate = new pg.Client({ connectionString: url });
    const lost = () => {
      if (client === candidate) client = undefined;
      candidate.end().catch(() => {});
    };
    candidate.on('error', lost);
    candidate.on('end', lost);
    candidate.on('notification', (message) => {
      if (message.channel === ATTEMPTS_CHANNEL) wakeAll();
    });
    connecting = (async () => {
      try {
        await candidate.connect();
        await candidate.query(`listen ${ATTEMPTS_CHANNEL}`);
        if (closed) await candidate.end();
        else client = candidate;
        // Jobs may have arrived while the listener was down: let sleepers fetch once now.
        wakeAll();
      } catch {
        await candidate.end().catch(() => {});
      } finally {
        connecting = undefined;
      }
    })();
    return connecting;
  };

  return {
    start: open,
    generation: () => generation,
    listening: () => client !== undefined,
    async wait(ms, signal, since) {
      await open();
      if ((since !== undefined && generation !== since) || signal.aborted) return;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          waiters.delete(done);
          signal.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(done, ms);
        waiters.add(done);
        signal.addEventListener('abort', done, { once: true });
      });
    },
    async close() {
      closed = true;
      await connecting;
      const current = client;
      client = undefined;
      for (const wake of [...waiters]) wake();
      await current?.end().catch(() => {});
    },
  };
}
