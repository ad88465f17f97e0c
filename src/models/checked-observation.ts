import * as z from 'zod';
import {
  type Observation,
  ObservationSchema,
  observationSchema,
  type SurfaceEntry,
  SurfaceEntrySchema,
} from './observation.js';
import { parseRecord } from './record.js';

/**
 * The observation trust cache: an observation (or entry) is validated against its schema once, then
 * deep-frozen and remembered, so handing the same object back skips re-validation. Safe because a frozen
 * object cannot have changed since it was checked; an edited copy is a new object and is checked again.
 */

const checkedObservations = new WeakSet<object>();

/**
 * Validates an observation against its schema once. The validated record is deep-frozen — observations
 * are immutable evidence — and remembered, so handing the same object back (replaying it with many
 * criteria) skips re-validation: a frozen object cannot have changed since it was checked.
 */
export function checkObservation(value: unknown): Observation {
  if (typeof value === 'object' && value !== null && checkedObservations.has(value))
    return value as Observation;
  const observation = parseRecord(ObservationSchema, value, 'observation');
  deepFreeze(observation);
  checkedObservations.add(observation);
  return observation;
}

function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  for (const child of Object.values(value)) deepFreeze(child);
  Object.freeze(value);
}

const checkedEntries = new WeakSet<object>();

/**
 * Validates entries as they arrive in batches from an acquisition still running, so that validation
 * overlaps the walk instead of following it. Each entry is parsed against {@link SurfaceEntrySchema},
 * deep-frozen and remembered; a frozen entry cannot change after its check. Throws like
 * {@link checkObservation} on the first invalid entry.
 */
export function checkSurfaceEntries(batch: readonly unknown[]): SurfaceEntry[] {
  const checked: SurfaceEntry[] = [];
  for (const value of batch) {
    const entry = parseRecord(SurfaceEntrySchema, value, 'observation entry');
    deepFreeze(entry);
    checkedEntries.add(entry);
    checked.push(entry);
  }
  return checked;
}

const CheckedEntrySchema = z.custom<SurfaceEntry>(
  (value) => typeof value === 'object' && value !== null && checkedEntries.has(value),
  'entry was not validated by checkSurfaceEntries',
);
const ObservationOfCheckedEntriesSchema = observationSchema(CheckedEntrySchema);

/**
 * {@link checkObservation} for an observation whose entries all came from {@link checkSurfaceEntries}:
 * every rule of {@link ObservationSchema} still holds for the result (each entry was parsed against the
 * entry schema; the invariants across entries — sorted, unique, an exact scope's own uri — and across
 * the record are checked here), without parsing each entry a second time. An entry that was not checked
 * that way is rejected, never trusted. The result is deep-frozen and remembered like checkObservation's.
 */
export function checkObservationOfCheckedEntries(value: unknown): Observation {
  const observation = parseRecord(ObservationOfCheckedEntriesSchema, value, 'observation');
  deepFreeze(observation);
  checkedObservations.add(observation);
  return observation;
}
