import { isDeepStrictEqual } from 'node:util';
import { compareUris, type ManifestEntry, pickCheckedManifestEntries } from '../../models/manifest.js';
import type { CoverageGap } from '../../models/observation.js';
import { STAT_KEY_WIDTH, sharedStatKeys } from './baseline-digests.js';

/**
 * A manifest's walk and its lookups (exact-lookup.ts) made one list of entries (SPEC §13). Each looked-up
 * uri holds the lookup's entry, or none when the lookup found nothing; every other uri holds the walk's.
 * The walk's entry and its stat key stay when the lookup saw the very same entry (no link followed: the
 * usual case), so a later manifest may still reuse its digest; a lookup's own entry has no key (it is
 * read again next time, which costs one file).
 *
 * Gaps: the walk's all stay, the lookups' are added. The verdicts decide which can hide a looked-up uri
 * (only those naming it: verdicts/gap-scope.ts), never by dropping any here.
 */

export interface LookupResult {
  uri: string;
  /** Checked (models/manifest.ts), at most one entry, at `uri`. */
  entries: readonly ManifestEntry[];
  gaps: readonly CoverageGap[];
}

export interface MergedLookups {
  entries: ManifestEntry[];
  gaps: CoverageGap[];
  keys: Float64Array | undefined;
  /** The looked-up uris, sorted, unique. */
  lookups: string[];
}

/**
 * @param walk the walk's checked entries, sorted by uri; `walkKeys` their stat keys when any.
 * @param lookups one result per uri, uris unique.
 */
export function mergeLookups(
  walk: readonly ManifestEntry[],
  walkKeys: Float64Array | undefined,
  walkGaps: readonly CoverageGap[],
  lookups: readonly LookupResult[],
): MergedLookups {
  const sorted = [...lookups].sort((a, b) => compareUris(a.uri, b.uri));
  const byUri = new Map(sorted.map((lookup, i) => [lookup.uri, i]));
  // picks: (list, index) pairs; list 0 is the walk, list 1 + i is lookup i's.
  const picks: number[] = [];
  /** For each picked entry, the walk index its key comes from, or -1. */
  const keyFrom: number[] = [];
  let next = 0;
  const takeLookup = (i: number, walkIndex: number) => {
    const lookup = sorted[i] as LookupResult;
    const entry = lookup.entries[0];
    if (entry === undefined) return;
    const same = walkIndex >= 0 && isDeepStrictEqual(entry, walk[walkIndex]);
    picks.push(same ? 0 : 1 + i, same ? walkIndex : 0);
    keyFrom.push(same ? walkIndex : -1);
  };
  for (let w = 0; w < walk.length; w++) {
    const uri = (walk[w] as ManifestEntry).uri;
    // Looked-up uris sorted before this walk entry and absent from the walk.
    while (next < sorted.length && compareUris((sorted[next] as LookupResult).uri, uri) < 0)
      takeLookup(next++, -1);
    const at = byUri.get(uri);
    if (at === undefined) {
      picks.push(0, w);
      keyFrom.push(w);
      continue;
    }
    takeLookup(at, w);
    next = at + 1;
  }
  while (next < sorted.length) takeLookup(next++, -1);
  const lists = [walk, ...sorted.map((lookup) => lookup.entries)];
  const entries = pickCheckedManifestEntries(lists, Int32Array.from(picks));
  let keys: Float64Array | undefined;
  if (walkKeys !== undefined) {
    keys = sharedStatKeys(entries.length);
    for (let k = 0; k < keyFrom.length; k++) {
      const from = keyFrom[k] as number;
      if (from < 0) continue;
      for (let j = 0; j < STAT_KEY_WIDTH; j++) {
        keys[k * STAT_KEY_WIDTH + j] = walkKeys[from * STAT_KEY_WIDTH + j] as number;
      }
    }
  }
  return {
    entries,
    gaps: [...walkGaps, ...sorted.flatMap((lookup) => lookup.gaps)],
    keys,
    lookups: sorted.map((lookup) => lookup.uri),
  };
}
