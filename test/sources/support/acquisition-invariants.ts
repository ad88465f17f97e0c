import assert from 'node:assert/strict';
import { GAP_REASONS, type MatchKind } from '../../../src/models/vocabulary.js';
import type { AcquireResult } from '../../../src/sources/local-file/acquire-sync.js';

/** Content of a file outside the fuzzed root: no entry may ever hold it. */
export const SECRET = 'FUZZ-OUTSIDE-SECRET';

/** What every acquisition result must satisfy, whatever the input (the fuzzers' oracle, issue 3). */
export function assertResultInvariants(
  result: AcquireResult,
  uri: string,
  match: MatchKind,
  limits: Limits,
): void {
  const uris = result.entries.map((entry) => entry.uri);
  assert.deepEqual(uris, [...uris].sort(), 'entries sorted by uri');
  assert.equal(new Set(uris).size, uris.length, 'entry uris unique');
  if (match === 'exact') for (const entryUri of uris) assert.equal(entryUri, uri);
  assert.equal(result.acquisition === 'complete', result.gaps.length === 0, 'complete exactly without gaps');
  for (const gap of result.gaps) assert.ok((GAP_REASONS as readonly string[]).includes(gap.reason));
  assert.ok(result.stats.entriesExamined <= limits.maxListedEntries + 1, 'maxListedEntries');
  assert.ok(result.stats.candidates <= limits.maxFiles + 1, 'maxFiles');
  assert.ok(result.stats.bytesRead <= limits.maxReadBytes, 'maxReadBytes');
  assert.ok(result.entries.length <= limits.maxFiles, 'no more entries than maxFiles');
  for (const entry of result.entries) {
    assert.ok(!entry.content?.includes(SECRET), 'outside content read');
    if (entry.content !== null) assert.ok(Buffer.byteLength(entry.content) <= limits.maxContentBytes);
    // Evidence that is not text keeps only a prefix and is always marked truncated (SPEC §13: nothing but
    // a `contains` in that prefix is decided from it), even when the prefix happens to be the whole file.
    if (entry.notText === true) assert.equal(entry.contentTruncated, true, 'not text: truncated');
    else if (entry.sha256 !== null)
      assert.equal(
        entry.contentTruncated,
        Buffer.byteLength(entry.content ?? '') < entry.sizeBytes && entry.content !== null,
      );
  }
}

export interface Limits {
  maxFiles: number;
  maxContentBytes: number;
  maxReadBytes: number;
  maxListedEntries: number;
}

export const DEFAULTS: Limits = {
  maxFiles: 1000,
  maxContentBytes: 1_000_000,
  maxReadBytes: 16_000_000,
  maxListedEntries: 100_000,
};
