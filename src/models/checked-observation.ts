import * as z from 'zod';
import {
  acceptObservation,
  acceptSurfaceEntry,
  acceptSurfaceEntryFields,
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

/**
 * Entry lists built here: each is frozen when it is registered, and every element is an entry checked
 * against the entry rule and frozen before the list was built. A frozen array cannot gain, lose or swap
 * an element, and a frozen entry cannot change, so membership here proves every element was checked and
 * is unchanged since — one WeakSet entry per list, not per entry (the receipt of 100,000 entries paid
 * ≈ 0.7 µs an entry for a WeakSet of entries, plus their share of the garbage collector's work).
 */
const checkedEntryLists = new WeakSet<readonly SurfaceEntry[]>();

function registered(entries: SurfaceEntry[]): SurfaceEntry[] {
  Object.freeze(entries);
  checkedEntryLists.add(entries);
  return entries;
}

/**
 * Checks entries as they arrive in batches from an acquisition still running, so that the check overlaps
 * the walk instead of following it. Each entry goes through {@link acceptSurfaceEntry} (the entry rule,
 * hand-written) and, when that does not accept it, through {@link SurfaceEntrySchema} itself — which
 * accepts it or throws like {@link checkObservation}, naming the first invalid entry. Either way the
 * entry kept is a fresh frozen plain object (never the caller's), and the returned list is frozen and
 * registered, so {@link checkObservationOfCheckedEntries} can trust it without checking it again.
 */
export function checkSurfaceEntries(batch: readonly unknown[]): SurfaceEntry[] {
  const checked: SurfaceEntry[] = new Array(batch.length);
  for (let i = 0; i < batch.length; i++) {
    const value = batch[i];
    const entry = acceptSurfaceEntry(value) ?? parseRecord(SurfaceEntrySchema, value, 'observation entry');
    // Every value of an entry is a primitive, so freezing the object freezes all of it.
    checked[i] = Object.freeze(entry);
  }
  return registered(checked);
}

/**
 * {@link checkSurfaceEntries} for entries whose values arrive apart rather than as objects (the packed
 * batches of local-file/packed-entries.ts): each entry is checked by the same rule (the hand-written one,
 * then the schema, which throws naming the entry), kept as a fresh frozen object, and {@link list} gives
 * the frozen, registered list once every entry was added.
 */
export class CheckedSurfaceEntries {
  readonly #entries: SurfaceEntry[] = [];
  #done = false;

  add(
    uri: unknown,
    sizeBytes: unknown,
    sha256: unknown,
    modifiedAt: unknown,
    content: unknown,
    contentTruncated: unknown,
    /** The UTF-8 length of `content`, when the caller has proven it (see acceptSurfaceEntryFields). */
    contentUtf8Bytes?: number,
    /** `sha256`, when a string, is known to be lowercase hex (see acceptSurfaceEntryFields). */
    sha256IsHex?: boolean,
    /** The links followed to the entry, when any (an entry with one is checked by the schema itself). */
    via?: unknown,
    /** The file is not text (checked by the schema itself, like `via`). */
    notText?: boolean,
  ): void {
    if (this.#done) throw new TypeError('CheckedSurfaceEntries: add after list(): a bug');
    if (via !== undefined || notText === true) {
      const linked = parseRecord(
        SurfaceEntrySchema,
        {
          uri,
          sizeBytes,
          sha256,
          modifiedAt,
          content,
          contentTruncated,
          ...(via === undefined ? {} : { via }),
          ...(notText === true ? { notText } : {}),
        },
        'observation entry',
      );
      this.#entries.push(Object.freeze(linked));
      return;
    }
    const entry =
      acceptSurfaceEntryFields(
        uri,
        sizeBytes,
        sha256,
        modifiedAt,
        content,
        contentTruncated,
        contentUtf8Bytes,
        sha256IsHex,
      ) ??
      parseRecord(
        SurfaceEntrySchema,
        { uri, sizeBytes, sha256, modifiedAt, content, contentTruncated },
        'observation entry',
      );
    this.#entries.push(Object.freeze(entry));
  }

  /** The checked list: frozen and registered (no entry can be added after). */
  list(): SurfaceEntry[] {
    this.#done = true;
    return registered(this.#entries);
  }
}

/**
 * One list of the entries of several lists from {@link checkSurfaceEntries} (the batches of one
 * acquisition), sorted by uri, frozen and registered. A list that was not built here is refused: its
 * entries were never checked.
 */
export function mergeCheckedEntries(lists: readonly SurfaceEntry[][]): SurfaceEntry[] {
  let size = 0;
  for (const list of lists) {
    if (!checkedEntryLists.has(list)) {
      throw new TypeError('mergeCheckedEntries was given a list checkSurfaceEntries did not build: a bug');
    }
    size += list.length;
  }
  const merged: SurfaceEntry[] = new Array(size);
  let at = 0;
  for (const list of lists) for (const entry of list) merged[at++] = entry;
  merged.sort((a, b) => (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0));
  return registered(merged);
}

const CheckedEntriesSchema = z.custom<SurfaceEntry[]>(
  (value) => Array.isArray(value) && checkedEntryLists.has(value),
  'entries were not checked by checkSurfaceEntries',
);
/** @internal The schema {@link checkObservationOfCheckedEntries} falls back to (exported for its agreement test). */
export const ObservationOfCheckedEntriesSchema = observationSchema(CheckedEntriesSchema);
/** The same test as {@link CheckedEntriesSchema}, for the hand-written record rule. */
const acceptCheckedEntries = (value: unknown): SurfaceEntry[] | undefined =>
  Array.isArray(value) && checkedEntryLists.has(value) ? value : undefined;

/**
 * {@link checkObservation} for an observation whose entry list came from {@link checkSurfaceEntries} or
 * {@link mergeCheckedEntries}: every rule of {@link ObservationSchema} still holds for the result (each
 * entry was checked against the entry rule; the invariants across entries — sorted, unique, matched by
 * the scope — and across the record are checked here), without checking each entry a second time. Any
 * other list (a copy, a list with one unchecked entry added) is rejected, never trusted. The result is
 * deep-frozen and remembered like checkObservation's.
 *
 * The record goes through {@link acceptObservation} (the same rule, hand-written; ≈ 20–40 µs less of the
 * main thread per acquisition than zod's parse) and, when that does not accept it, through the schema
 * itself, which accepts it or throws naming the wrong fields. The fast path can only be stricter.
 */
export function checkObservationOfCheckedEntries(value: unknown): Observation {
  const observation =
    acceptObservation(value, acceptCheckedEntries) ??
    parseRecord(ObservationOfCheckedEntriesSchema, value, 'observation');
  deepFreeze(observation);
  checkedObservations.add(observation);
  return observation;
}
