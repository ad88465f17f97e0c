import { InvalidOptionError } from '../errors.js';
import { agentStateMatcher, type Change, type ChangeSet, checkChangeSet } from '../models/change-set.js';
import { parseLocator } from '../models/locator.js';
import { compareUris, type Manifest, type ManifestEntry } from '../models/manifest.js';
import { type CoverageGap, uniqueReasons } from '../models/observation.js';
import { gapsCouldHide, manifestCouldHide } from './gap-scope.js';

/**
 * The change set between a baseline manifest and a final one (SPEC §12). Pure: no I/O, no clock.
 *
 * Content is compared by digest, never by modification time (an agent sets any mtime it likes). Without
 * a digest on one side the size can still prove a change; otherwise the entry is `undecided`. An entry
 * missing from one manifest is a creation or deletion only when no gap of that manifest could hide it —
 * a file beyond a budget or in an unlistable directory was not shown deleted.
 *
 * An entry under a `workspace_unsettled` gap of the final manifest (it changed between two final readings:
 * `sandbox: none`) is `undecided` whatever its two sides show: created, modified or deleted while a
 * process was still writing proves nothing.
 *
 * With `agentStatePaths` (glob locators of the agent CLI's own caches, sessions and logs), each change
 * beneath one is marked `agentState`: still a change, listed apart and left out of the headline counts.
 *
 * @example
 * const changes = diffManifests(await source.acquireManifest(), await source.acquireManifest());
 */
export interface DiffOptions {
  /** Glob locators of the agent CLI's own state on this surface (SPEC §13). */
  agentStatePaths?: readonly string[] | undefined;
}

export function diffManifests(baseline: Manifest, final: Manifest, options: DiffOptions = {}): ChangeSet {
  if (baseline.surface !== final.surface) {
    throw new InvalidOptionError(
      `a change set compares two manifests of one surface, got ${baseline.surface} and ${final.surface}`,
    );
  }
  const changes: Change[] = [];
  const undecided: string[] = [];
  const hiddenIn = manifestCouldHide;
  const unsettledGaps = final.coverage.gaps.filter((gap) => gap.reason === 'workspace_unsettled');
  const unsettled = (uri: string) =>
    unsettledGaps.length > 0 && gapsCouldHide(unsettledGaps, parseLocator(uri, 'exact'));
  // Both lists are sorted by uri and unique (the Manifest schema checks it): one merge pass visits every
  // uri of either manifest once, in sorted order.
  const before = baseline.entries;
  const after = final.entries;
  requireSorted(before, 'baseline');
  requireSorted(after, 'final');
  let i = 0;
  let j = 0;
  while (i < before.length || j < after.length) {
    const b = before[i];
    const a = after[j];
    const order = b === undefined ? 1 : a === undefined ? -1 : compareUris(b.uri, a.uri);
    if (order === 0 && b !== undefined && a !== undefined) {
      i++;
      j++;
      if (unsettled(b.uri)) {
        undecided.push(b.uri);
        continue;
      }
      const content = contentDiffers(b, a);
      if (content === 'unknown') undecided.push(b.uri);
      if (content === true) changes.push({ uri: b.uri, kind: 'modified', before: b, after: a });
      else if (b.mode !== a.mode) changes.push({ uri: b.uri, kind: 'mode_changed', before: b, after: a });
    } else if (order < 0 && b !== undefined) {
      i++;
      if (hiddenIn(final, b.uri) || unsettled(b.uri)) undecided.push(b.uri);
      else changes.push({ uri: b.uri, kind: 'deleted', before: b, after: null });
    } else if (a !== undefined) {
      j++;
      if (hiddenIn(baseline, a.uri) || unsettled(a.uri)) undecided.push(a.uri);
      else changes.push({ uri: a.uri, kind: 'created', before: null, after: a });
    }
  }
  markMoves(changes);
  const agentStatePaths = [...(options.agentStatePaths ?? [])];
  const inAgentState = agentStateMatcher(agentStatePaths);
  for (const change of changes) if (inAgentState(change.uri)) change.agentState = true;
  const gaps: CoverageGap[] = [
    ...baseline.coverage.gaps.map((gap) => labelled(gap, 'baseline')),
    ...final.coverage.gaps.map((gap) => labelled(gap, 'final')),
  ];
  const complete = baseline.acquisition === 'complete' && final.acquisition === 'complete';
  const lookups = (baseline.lookups ?? []).filter((uri) => final.lookups?.includes(uri) === true);
  return checkChangeSet({
    schemaVersion: 1,
    surface: baseline.surface,
    baselineTakenAt: baseline.takenAt,
    finalTakenAt: final.takenAt,
    baselineAcquisition: baseline.acquisition,
    finalAcquisition: final.acquisition,
    changes,
    undecided,
    ...(agentStatePaths.length === 0 ? {} : { agentStatePaths }),
    coverage: { complete, reasons: uniqueReasons(gaps), gaps },
    ...(lookups.length === 0 ? {} : { lookups }),
  });
}

/** A record built by hand, not through checkManifest, could be out of order: refused, never misread. */
function requireSorted(entries: readonly ManifestEntry[], which: string): void {
  for (let k = 1; k < entries.length; k++) {
    if (compareUris((entries[k - 1] as ManifestEntry).uri, (entries[k] as ManifestEntry).uri) >= 0) {
      throw new InvalidOptionError(
        `the ${which} manifest's entries are not sorted by uri (use checkManifest)`,
      );
    }
  }
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
