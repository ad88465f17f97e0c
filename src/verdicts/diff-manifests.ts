import { InvalidOptionError } from '../errors.js';
import { agentStateMatcher, type Change, type ChangeSet, checkChangeSet } from '../models/change-set.js';
import { parseLocator } from '../models/locator.js';
import { compareUris, type Manifest, type ManifestEntry } from '../models/manifest.js';
import { type CoverageGap, uniqueReasons } from '../models/observation.js';
import { gapsCouldHide, manifestCouldHide } from './gap-scope.js';
import {
  linkGapCouldHide,
  resolveInManifest,
  type SeenThroughLinks,
  seeThroughLinks,
} from './through-links.js';

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
  const before = baseline.entries;
  const after = final.entries;
  requireSorted(before, 'baseline');
  requireSorted(after, 'final');
  const { changes, undecided } = mergeDiff(
    before,
    after,
    (uri) => manifestCouldHide(baseline, uri),
    (uri) => manifestCouldHide(final, uri),
    unsettledBy(final.coverage.gaps),
  );
  const through = diffThroughLinks(baseline, final, changes);
  markMoves(changes);
  const agentStatePaths = [...(options.agentStatePaths ?? [])];
  const inAgentState = agentStateMatcher(agentStatePaths);
  for (const change of changes) if (inAgentState(change.uri)) change.agentState = true;
  for (const change of through?.changes ?? []) if (inAgentState(change.uri)) change.agentState = true;
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
    ...(through === undefined ? {} : { throughLinks: through }),
  });
}

/**
 * One merge pass over two entry lists sorted by uri and unique: every uri of either list once, in order.
 * An entry missing from one side is a creation or deletion only when that side could not hide it.
 */
function mergeDiff(
  before: readonly ManifestEntry[],
  after: readonly ManifestEntry[],
  hiddenBefore: (uri: string) => boolean,
  hiddenAfter: (uri: string) => boolean,
  unsettled: (uri: string) => boolean,
): { changes: Change[]; undecided: string[] } {
  const changes: Change[] = [];
  const undecided: string[] = [];
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
      if (hiddenAfter(b.uri) || unsettled(b.uri)) undecided.push(b.uri);
      else changes.push({ uri: b.uri, kind: 'deleted', before: b, after: null });
    } else if (a !== undefined) {
      j++;
      if (hiddenBefore(a.uri) || unsettled(a.uri)) undecided.push(a.uri);
      else changes.push({ uri: a.uri, kind: 'created', before: null, after: a });
    }
  }
  return { changes, undecided };
}

/**
 * The changes seen at paths through in-root directory links (through-links.ts), which the real paths'
 * changes do not list: both manifests seen through their links are compared, and what differs at a path
 * through a link is kept apart, so each file is listed once in `changes` and a condition on the linked
 * path (`/.git/hooks/*` with `.git -> real-git`) still sees it. An exact lookup's change at a linked path
 * that repeats the change at its real path moves there too. Undefined when no link changes anything.
 * `changes` loses the lookups' repeats (in place).
 */
function diffThroughLinks(
  baseline: Manifest,
  final: Manifest,
  changes: Change[],
): NonNullable<ChangeSet['throughLinks']> | undefined {
  const seenBefore = seeThroughLinks(baseline);
  const seenAfter = seeThroughLinks(final);
  const moved = repeatsOfRealChanges(baseline, final, changes);
  const seenCount = (seen: SeenThroughLinks) => seen.entries.length + seen.files.length;
  if (seenCount(seenBefore) + seenCount(seenAfter) + moved.length === 0) {
    const gaps = labelledBoth(seenBefore.gaps, seenAfter.gaps);
    const undecided = unfollowedLinkChanges(changes, [], seenBefore, seenAfter);
    return gaps.length + undecided.length === 0 ? undefined : { changes: [], undecided, gaps };
  }
  const hidden = (manifest: Manifest, seen: SeenThroughLinks) => (uri: string) => {
    if (manifestCouldHide(manifest, uri)) return true;
    const locator = parseLocator(uri, 'exact');
    return seen.gaps.some((gap) => linkGapCouldHide(gap, locator));
  };
  const diff = mergeDiff(
    mergeSorted(withFileViews(baseline.entries, seenBefore.files), seenBefore.entries),
    mergeSorted(withFileViews(final.entries, seenAfter.files), seenAfter.entries),
    hidden(baseline, seenBefore),
    hidden(final, seenAfter),
    unsettledBy([...final.coverage.gaps, ...seenAfter.gaps]),
  );
  // A link to a file, on either side, is judged here as the file: what changed at its uri seen so (a link
  // removed while its file stays is that file deleted there) goes beside the link's own change.
  const fileLinks = new Set([...seenBefore.files, ...seenAfter.files].map((entry) => entry.uri));
  const linked = (uri: string) =>
    seenBefore.realUri.has(uri) || seenAfter.realUri.has(uri) || fileLinks.has(uri);
  const throughChanges = [...diff.changes.filter((change) => linked(change.uri)), ...moved].sort((a, b) =>
    compareUris(a.uri, b.uri),
  );
  const unfollowed = unfollowedLinkChanges(changes, throughChanges, seenBefore, seenAfter);
  return {
    changes: throughChanges,
    undecided: [...new Set([...diff.undecided.filter(linked), ...unfollowed])].sort(compareUris),
    gaps: labelledBoth(seenBefore.gaps, seenAfter.gaps),
  };
}

/**
 * The uris of changed links whose target cannot be told (an absolute target, one climbing above the root,
 * too many links, a target a gap hides). Git runs `.git/hooks/pre-commit -> /workspace/payload.sh` as a hook, so a
 * link like it planted where a condition looks is not a decided "no file there": what such a link is can
 * not be told from the manifests, and its uri is undecided (the verdict undetermined, never `false`).
 */
function unfollowedLinkChanges(
  changes: readonly Change[],
  throughChanges: readonly Change[],
  seenBefore: SeenThroughLinks,
  seenAfter: SeenThroughLinks,
): string[] {
  const unfollowed = (seen: SeenThroughLinks) => (entry: ManifestEntry | null) =>
    entry?.type === 'symlink' && seen.unresolved.has(seen.realUri.get(entry.uri) ?? entry.uri);
  const before = unfollowed(seenBefore);
  const after = unfollowed(seenAfter);
  return [...changes, ...throughChanges]
    .filter((change) => before(change.before) || after(change.after))
    .map((change) => change.uri);
}

/**
 * Takes out of `changes` each change an exact lookup saw at a path through a link (its entry has `via`)
 * when the walk's change at the real path is the same change: listed once, at the real path.
 */
function repeatsOfRealChanges(baseline: Manifest, final: Manifest, changes: Change[]): Change[] {
  if (!changes.some((change) => (change.after ?? change.before)?.via !== undefined)) return [];
  const byUri = new Map(changes.map((change) => [change.uri, change]));
  const moved: Change[] = [];
  for (const change of changes) {
    const entry = change.after ?? change.before;
    if (entry?.via === undefined) continue;
    const real = resolveInManifest(change.after === null ? baseline : final, change.uri);
    const twin = real === null || real === change.uri ? undefined : byUri.get(real);
    if (
      twin !== undefined &&
      twin.kind === change.kind &&
      sameEntry(twin.before, change.before) &&
      sameEntry(twin.after, change.after)
    ) {
      moved.push(change);
    }
  }
  const out = changes.filter((change) => !moved.includes(change));
  changes.length = 0;
  changes.push(...out);
  return moved;
}

/** The same entry but for its uri and via. */
function sameEntry(a: ManifestEntry | null, b: ManifestEntry | null): boolean {
  if (a === null || b === null) return a === b;
  return (
    a.type === b.type &&
    a.sizeBytes === b.sizeBytes &&
    a.sha256 === b.sha256 &&
    a.mode === b.mode &&
    a.linkTarget === b.linkTarget
  );
}

/** Whether a `workspace_unsettled` gap among `gaps` covers a uri. */
function unsettledBy(gaps: readonly CoverageGap[]): (uri: string) => boolean {
  const unsettled = gaps.filter((gap) => gap.reason === 'workspace_unsettled');
  return (uri) => unsettled.length > 0 && gapsCouldHide(unsettled, parseLocator(uri, 'exact'));
}

/** The entries with each link to a file replaced by its view as that file (both sorted by uri). */
function withFileViews(entries: readonly ManifestEntry[], files: readonly ManifestEntry[]): ManifestEntry[] {
  if (files.length === 0) return [...entries];
  const views = new Map(files.map((view) => [view.uri, view]));
  return entries.map((entry) => views.get(entry.uri) ?? entry);
}

/** Two lists sorted by uri with no uri in both, as one sorted list. */
function mergeSorted(a: readonly ManifestEntry[], b: readonly ManifestEntry[]): ManifestEntry[] {
  if (b.length === 0) return [...a];
  const out: ManifestEntry[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const x = a[i];
    const y = b[j];
    if (y === undefined || (x !== undefined && compareUris(x.uri, y.uri) < 0)) {
      out.push(x as ManifestEntry);
      i++;
    } else {
      out.push(y);
      j++;
    }
  }
  return out;
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

/** Both manifests' gaps, each naming the manifest it is from (as the change set's coverage does). */
function labelledBoth(before: readonly CoverageGap[], after: readonly CoverageGap[]): CoverageGap[] {
  return [...before.map((gap) => labelled(gap, 'baseline')), ...after.map((gap) => labelled(gap, 'final'))];
}

function labelled(gap: CoverageGap, which: 'baseline' | 'final'): CoverageGap {
  const detail = gap.detail === undefined ? `${which} manifest` : `${which} manifest: ${gap.detail}`;
  return { ...gap, detail };
}
