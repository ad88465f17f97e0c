import { createHash } from 'node:crypto';
import * as z from 'zod';

/**
 * One queued attempt: what a job carries (nothing else — the campaign is read from the run's bundle) and
 * its job id. The id is derived from (run id, attack, attempt), so enqueuing the same attempt twice names
 * the same job and the second insert does nothing (pg-boss inserts with `on conflict do nothing`); the
 * same string is also the job's `singletonKey`.
 */

export const AttemptJobSchema = z.strictObject({
  runId: z.string().min(1),
  attack: z.string().min(1),
  attempt: z.number().int().positive(),
});
export type AttemptJob = z.infer<typeof AttemptJobSchema>;

export function attemptKey(job: AttemptJob): string {
  return `${job.runId}/${job.attack}/${job.attempt}`;
}

/** A UUID (version 8, name-based with sha256) of the attempt key. */
export function attemptJobId(job: AttemptJob): string {
  const hex = createHash('sha256')
    .update(JSON.stringify([job.runId, job.attack, job.attempt]))
    .digest('hex')
    .slice(0, 32)
    .split('');
  hex[12] = '8';
  hex[16] = ((Number.parseInt(hex[16] as string, 16) & 0x3) | 0x8).toString(16);
  const h = hex.join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** How long a job may stay active before pg-boss fails it for retry: the attempt timeout plus a grace. */
export function expireSecondsFor(attemptTimeoutMs: number, graceSeconds: number): number {
  return Math.ceil(attemptTimeoutMs / 1000) + graceSeconds;
}
