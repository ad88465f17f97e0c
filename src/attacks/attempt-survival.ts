import { oneLineError } from '../errors.js';
import type { AttemptRecord, CampaignRun } from './attempt-record.js';
import {
  type AttemptContext,
  type AttemptRecorder,
  runAttempt,
  startAttempt,
  unrunAttempt,
} from './run-attempt.js';

/**
 * A run survives its agents (SPEC §13): what goes wrong in one attempt — an unexpected failure while it
 * ran, a full disk or an I/O error while its record is stored — is that attempt's outcome, never the
 * run's end. Before this, one such failure rejected the whole campaign: no table, no report, JSON or JUnit,
 * no `--fail-on` status, and later attacks never ran. Only the caller's abort still ends the run.
 */

/**
 * {@link runAttempt}, with any failure it did not turn into a record itself (a bug, an exhausted resource)
 * recorded as the attempt's `error`; the caller's abort is rethrown.
 */
export async function runSurvivingAttempt(context: AttemptContext): Promise<AttemptRecord> {
  const start = startAttempt(context);
  try {
    return await runAttempt(context);
  } catch (error) {
    if (context.signal?.aborted) throw context.signal.reason;
    // Recorded like an attempt that never ran: nothing of it can be judged (its task is undetermined).
    return unrunAttempt(context, `the attempt failed: ${oneLineError(error)}`, start);
  }
}

/**
 * Stores the finished attempt; a memory that refuses it (a full disk, an I/O error) leaves the run going.
 * The record then says why the memory lacks it (`storeError`), and an attempt that was not a success is
 * `error` with that cause. A proven success stays a success (the outcome follows the evidence): a hostile
 * agent that fills the disk must not turn its success into an error a gate lets through.
 */
export async function storeAttempt(
  recorder: AttemptRecorder | undefined,
  record: AttemptRecord,
  run: CampaignRun,
  signal: AbortSignal | undefined,
): Promise<AttemptRecord> {
  if (recorder === undefined) return record;
  try {
    await recorder.recordAttempt(record, run);
    return record;
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    const storeError = record.storeError ?? `the memory could not store this attempt: ${oneLineError(error)}`;
    if (record.outcome === 'success') return { ...record, storeError };
    return { ...record, outcome: 'error', error: record.error ?? storeError, storeError };
  }
}
