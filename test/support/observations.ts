import { createHash } from 'node:crypto';
import type { ComponentIdentifier } from '../../src/models/identifier.js';
import { type CoverageGap, type Observation, ObservationSchema } from '../../src/models/observation.js';
import { parseRecord } from '../../src/models/record.js';
import type { AcquisitionStatus, MatchKind } from '../../src/models/vocabulary.js';

/**
 * Builds observations for tests without touching the file system. Every builder that returns a typed
 * record validates it through the real schema, so a test can never judge evidence a source could not emit.
 */

export const OBSERVED_AT = '2025-01-02T03:04:05.000Z';
export const MODIFIED_AT = '2025-01-01T00:00:00.000Z';

export const TEST_SOURCE: ComponentIdentifier = {
  type: 'test_source',
  version: '1',
  params: { root: '/ws' },
};

export interface EntryInput {
  uri: string;
  sizeBytes: number;
  sha256: string | null;
  modifiedAt: string;
  content: string | null;
  contentTruncated: boolean;
}

export function sha256Hex(bytes: string | Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** A file read in full whose bytes are the UTF-8 text `content`. */
export function textEntry(uri: string, content: string): EntryInput {
  return {
    uri,
    sizeBytes: Buffer.byteLength(content),
    sha256: sha256Hex(content),
    modifiedAt: MODIFIED_AT,
    content,
    contentTruncated: false,
  };
}

/** A file of `sizeBytes` bytes of which only the text `prefix` was retained (and no digest taken). */
export function truncatedEntry(uri: string, prefix: string, sizeBytes: number): EntryInput {
  return { uri, sizeBytes, sha256: null, modifiedAt: MODIFIED_AT, content: prefix, contentTruncated: true };
}

/** A file read in full whose bytes are not UTF-8, so no text was retained. */
export function binaryEntry(uri: string, bytes: Uint8Array): EntryInput {
  return {
    uri,
    sizeBytes: bytes.length,
    sha256: sha256Hex(bytes),
    modifiedAt: MODIFIED_AT,
    content: null,
    contentTruncated: false,
  };
}

export interface ObservationOptions {
  uri?: string;
  match?: MatchKind;
  acquisition?: AcquisitionStatus;
  entries?: EntryInput[];
  gaps?: CoverageGap[];
  id?: string;
}

/**
 * The plain JSON of an observation (not validated), for tests that break one invariant at a time.
 * Coverage follows the acquisition: complete exactly when the acquisition is, reasons derived from gaps.
 */
export function observationInput(options: ObservationOptions = {}) {
  const scope = {
    scorableType: 'surface',
    uri: options.uri ?? '/data/out.txt',
    match: options.match ?? 'exact',
  };
  const acquisition = options.acquisition ?? 'complete';
  const gaps = options.gaps ?? [];
  return {
    id: options.id ?? 'obs-1',
    sourceIdentifier: structuredClone(TEST_SOURCE),
    acquisition,
    observedAt: OBSERVED_AT,
    scorable: { ...scope },
    payload: {
      kind: 'surface',
      schemaVersion: 1,
      scope: { ...scope },
      entries: (options.entries ?? []).map((entry) => ({ ...entry })),
      coverage: {
        complete: acquisition === 'complete',
        reasons: [...new Set(gaps.map((gap) => gap.reason))],
        gaps: gaps.map((gap) => ({ ...gap })),
      },
    },
    metadata: {},
  };
}

/** A validated observation (throws if the options describe evidence no source could emit). */
export function observation(options: ObservationOptions = {}): Observation {
  return parseRecord(ObservationSchema, observationInput(options), 'test observation');
}
