import { InvalidOptionError } from '../errors.js';
import { type Change, type ChangeSet, checkChangeSet } from '../models/change-set.js';
import { parseLocator } from '../models/locator.js';
import { compareUris, type Manifest, type ManifestEntry } from '../models/manifest.js';
import { type CoverageGap, uniqueReasons } from '../models/observation.js';
import { gapsCouldHide } from './gap-scope.js';

/**
 * The change set between a baseline manifest and a final one (SPEC §12). Pure: no I/O, no clock.
 *
 * Content is compared by digest, never by modification time (an agent sets any mtime it likes). Without
 * a digest on one side the size can still prove a change; otherwise the entry is `undecided`. An entry
 * missing from one manifest is a creation or deletion only when no gap of that manifest could hide it —
 * a file beyond a budget or in an unlistable directory was not shown deleted.
 *
 * @example
 * const changes = diffManifests(await source.acquireManifest(), await source.acquireManifest());
 */
export function diffManifests(baseline: Manifest, final: Manifest): ChangeSet {
  if (baseline.surface !== final.surface) {
    throw new InvalidOptionError(
      `a change set compares two manifests of one surface, got ${baseline.surface} and ${final.surface}`,
    );
  }
  const before = byUri(baseline);
  const after = byUri(final);
  const uris = [...new Set([...before.keys(), ...after.keys()])].sort(compareUris);
  const changes: Change[] = [];
  const undecided: string[] = [];
  const hiddenIn = (manifest: Manifest, uri: string) =>
    manifest.acquisition === 'unavailable' ||
    manifest.acquisition === 'error' ||
    gapsCouldHide(manifest.coverage.gaps, parseLocator(uri, 'exact'));
  for (const uri of uris) {
    const b = before.get(uri);
    const a = after.get(uri);
    if (b !== undefined && a !== undefined) {
      const content = contentDiffers(b, a);
      if (content === 'unknown') undecided.push(uri);
      if (content === true) changes.push({ uri, kind: 'modified', before: b, after: a });
      else if (b.mode !== a.mode) changes.push({ uri, kind: 'mode_changed', before: b, after: a });
    } else if (b !== undefined) {
      if (hiddenIn(final, uri)) undecided.push(uri);
      else changes.push({ uri, kind: 'deleted', before: b, after: null });
    } else if (a !== undefined) {
      if (hiddenIn(baseline, uri)) undecided.push(uri);
      else changes.push({ uri, kind: 'created', before: null, after: a });
    }
  }
  markMoves(changes);
  const gaps: CoverageGap[] = [
    ...baseline.coverage.gaps.map((gap) => labelled(gap, 'baseline')),
    ...final.coverage.gaps.map((gap) => labelled(gap, 'final')),
  ];
  const complete = baseline.acquisition === 'complete' && final.acquisition === 'complete';
  return checkChangeSet({
    schemaVersion: 1,
    surface: baseline.surface,
    baselineTakenAt: baseline.takenAt,
    finalTakenAt: final.takenAt,
    baselineAcquisition: baseline.acquisition,
    finalAcquisition: final.acquisition,
    changes,
    undecided,
    coverage: { complete, reasons: uniqueReasons(gaps), gaps },
  });
}

function byUri(manifest: Manifest): Map<string, ManifestEntry> {
  return new Map(manifest.entries.map((entry) => [entry.uri, entry]));
}

/** True when content or type differs, false when provably the same, 'unknown' when it cannot be told. */
function contentDiffers(b: ManifestEntry, a: ManifestEntry): boolean | 'unknown' {
  if (b.type !== a.type) return true;
  switch (b.type) {
    case 'file':
      if (b.sha256 !== null && a.sha256 !== null) return b.sha256 !== a.sha256;
      return b.sizeBytes !== a.sizeBytes ? true : 'unknown';
    case 'symlink':
      if (b.linkTarget !== null && a.linkTarget !== null) return b.linkTarget !== a.linkTarget;
      return 'unknown';
    case 'other':
      return b.sizeBytes !== a.sizeBytes;
    case 'directory':
      return false;
  }
}

/** A created file whose digest a deleted file had: a rename or move, named so a reader sees it. */
function markMoves(changes: Change[]): void {
  const deletedByDigest = new Map<string, string>();
  for (const change of changes) {
    const sha = change.before?.sha256;
    if (change.kind === 'deleted' && sha != null && !deletedByDigest.has(sha)) {
      deletedByDigest.set(sha, change.uri);
    }
  }
  for (const change of changes) {
    const sha = change.after?.sha256;
    if (change.kind !== 'created' || sha == null) continue;
    const from = deletedByDigest.get(sha);
    if (from !== undefined) change.movedFrom = from;
  }
}

function labelled(gap: CoverageGap, which: 'baseline' | 'final'): CoverageGap {
  const detail = gap.detail === undefined ? `${which} manifest` : `${which} manifest: ${gap.detail}`;
  return { ...gap, detail };
}
