import { type GlobSegment, matchesSegment, type ParsedLocator } from '../../models/locator.js';
import { type EntryKind, entryKindOf } from '../confined-fs/file-stat.js';
import { errorCode, rethrowCancelled } from '../confined-fs/fs-errors.js';
import { childUri, compareNames, decodeName, decodeNameLossy, escapeName } from '../confined-fs/names.js';
import { placeHandle } from '../confined-fs/placement.js';
import { type LinkHop, uriOf } from '../confined-fs/resolve-beneath.js';
import { type AcquisitionState, EnumerationStopped } from './acquisition-state.js';
import { readCandidate } from './confined-read.js';
import { resolveLinkTarget } from './exact-walk.js';
import { joinVia, openRealDirectory, resolveInRoot, unresolvedGap } from './linked-path.js';
import { recordManifestChild, STAT_AHEAD_CHUNK, statChildrenAhead } from './manifest-entry.js';
import type { StatAhead } from './stat-ahead.js';

/**
 * Acquires a glob locator by walking from the root handle (SPEC §5, §5.1).
 *
 * A walk state is (directory, pattern position). Every directory has one parent, so all the positions
 * that reach a directory are known before it is visited: each directory is visited once, listed at most
 * once, and each (directory, position) state is handled once. A directory whose positions are all
 * literal names is never listed: its children are opened by name (so a literal prefix such as `/data` in
 * `/data/**` never lists the root). Listings are sorted bytewise, so the walk is deterministic.
 *
 * A symbolic link to a directory is descended when it resolves beneath the root (SPEC §13;
 * linked-path.ts): the directory is reached again by its real names, and its entries carry the links
 * followed (`via`). A link that leaves the root is a gap. Every listing is keyed by the real directory and
 * the positions it is listed for, so a directory reached by a link and by its own name, or by a link loop,
 * is listed once for those positions and never followed again. A manifest records links as links and
 * follows none (its lookups follow them: acquire-sync.ts).
 */
export function walkGlob(state: AcquisitionState, locator: ParsedLocator): void {
  const segments = locator.glob ?? [];
  try {
    visitDirectory(state, segments, state.rootFd, ROOT_PLACE, new Set([0]), true);
  } catch (error) {
    if (!(error instanceof EnumerationStopped)) throw error;
  }
}

/**
 * Where a visited directory is: its uri (the path the locator matches), and, when links led to it, its
 * real names below the root and the links followed. A directory reached without a link has `real`
 * undefined: its uri is its real path.
 */
interface Place {
  uri: string;
  real: readonly Buffer[] | undefined;
  via: string | undefined;
}

const ROOT_PLACE: Place = { uri: '/', real: undefined, via: undefined };

/** The real names of `place` below the root (from its uri when no link led there: its names are UTF-8). */
function realNamesOf(place: Place): readonly Buffer[] {
  if (place.real !== undefined) return place.real;
  return place.uri === '/'
    ? []
    : place.uri
        .slice(1)
        .split('/')
        .map((name) => Buffer.from(name));
}

interface Child {
  name: Buffer;
  uri: string;
  kind: EntryKind;
  /**
   * Pattern positions to continue with inside this child when it is a directory. Never changed once the
   * child is built: children of one listing with the same positions share one set.
   */
  next: ReadonlySet<number>;
  /** The child matched the last segment: a file there is a candidate. */
  candidate: boolean;
}

function visitDirectory(
  state: AcquisitionState,
  segments: readonly GlobSegment[],
  dirFd: number,
  place: Place,
  positions: ReadonlySet<number>,
  isRoot: boolean,
): void {
  const dirUri = place.uri;
  const live = closeOverGlobstars(positions, segments);
  const needsListing = live.some((p) => (segments[p] as GlobSegment).kind !== 'literal');
  // Listed once per real directory and positions: a link back to it, or to an ancestor, adds nothing.
  if (needsListing && !state.firstListing(place.real === undefined ? dirUri : uriOf(place.real), live))
    return;
  const children = needsListing
    ? matchListing(state, segments, dirFd, dirUri, live, isRoot)
    : matchLiterals(segments, dirUri, live);
  // A reusing manifest stats every child first: those stats are taken ahead, on both reader threads, a
  // chunk of children at a time (a walk that maxFiles stops soon stats few names it never visits).
  let ahead: StatAhead[] | undefined;
  let aheadFrom = 0;
  for (let i = 0; i < children.length; i++) {
    if (state.manifest !== undefined && (i === 0 || i - aheadFrom === STAT_AHEAD_CHUNK)) {
      aheadFrom = i;
      ahead = statChildrenAhead(state, dirFd, children, i);
    }
    visitChild(state, segments, dirFd, place, children[i] as Child, ahead?.[i - aheadFrom]);
  }
}

/** `**` matches zero directories too: a state at `**` also stands at the position after it. */
function closeOverGlobstars(positions: ReadonlySet<number>, segments: readonly GlobSegment[]): number[] {
  const out = new Set<number>();
  for (let p of positions) {
    out.add(p);
    while (segments[p]?.kind === 'globstar' && p + 1 < segments.length) out.add(++p);
  }
  return [...out].sort((a, b) => a - b);
}

function matchLiterals(segments: readonly GlobSegment[], dirUri: string, live: readonly number[]): Child[] {
  const byName = new Map<string, Child & { next: Set<number> }>();
  for (const p of live) {
    const name = (segments[p] as { kind: 'literal'; name: string }).name;
    let child = byName.get(name);
    if (child === undefined) {
      child = {
        name: Buffer.from(name),
        uri: childUri(dirUri, name),
        kind: 'unknown',
        next: new Set(),
        candidate: false,
      };
      byName.set(name, child);
    }
    if (p === segments.length - 1) child.candidate = true;
    else child.next.add(p + 1);
  }
  return [...byName.values()].sort((a, b) => compareNames(a.name, b.name));
}

function matchListing(
  state: AcquisitionState,
  segments: readonly GlobSegment[],
  dirFd: number,
  dirUri: string,
  live: readonly number[],
  isRoot: boolean,
): Child[] {
  const listing = listDirectory(state, dirFd, dirUri, isRoot);
  const last = segments.length - 1;
  const children: Child[] = [];
  const unrepresentable: Buffer[] = [];
  const nextSets = new NextSets();
  for (const { name, kind } of listing) {
    const text = decodeName(name);
    const probe = text ?? decodeNameLossy(name);
    nextSets.start();
    let candidate = false;
    for (const p of live) {
      const segment = segments[p] as GlobSegment;
      if (!matchesSegment(segment, probe)) continue;
      if (segment.kind === 'globstar') {
        nextSets.add(p);
        if (p === last) candidate = true;
      } else if (p === last) candidate = true;
      else nextSets.add(p + 1);
    }
    const next = nextSets.finish();
    if (!candidate && next === undefined) continue;
    // A listed file (or FIFO, socket, device) that is not a candidate leads nowhere: it is neither read nor
    // descended, and visiting it records nothing. Skipping it here keeps a directory of thousands of files
    // from holding a child record and a uri for each until the walk has visited them all (`/**/*.none` over
    // 1,000-file directories). The manifest keeps every child: there each one is an entry. A name that is
    // not UTF-8 still goes on to its `unrepresentable_name` gap, as before: whether it could match was
    // judged on a lossy decoding, so it is reported rather than ruled out.
    if (!candidate && (kind === 'file' || kind === 'other') && text !== null && state.manifest === undefined)
      continue;
    if (text === null) unrepresentable.push(name);
    else children.push({ name, uri: childUri(dirUri, text), kind, next: next ?? nextSets.none, candidate });
  }
  // Sorted once the names that lead nowhere are gone (they record nothing, so their order never shows):
  // the same gaps, recorded before any child is visited, and the same children, each in byte order, as
  // sorting the whole listing first — without sorting the thousands of names a narrow pattern such as
  // `x*.md` drops.
  unrepresentable.sort(compareNames);
  for (const name of unrepresentable) {
    state.gap('unrepresentable_name', dirUri, `a name in this directory is not UTF-8: ${escapeName(name)}`);
  }
  return children.sort((a, b) => compareNames(a.name, b.name));
}

/**
 * The `next` sets of one listing's children: the positions a child continues with are collected, then
 * the one set holding exactly those positions is handed out (built the first time it is needed). Under
 * `/**` every child of a directory continues at the same position; sharing saves a Set per file.
 */
class NextSets {
  readonly none: ReadonlySet<number> = new Set();
  /** The set of one position, by position (nearly every child continues at exactly one). */
  readonly #single: (ReadonlySet<number> | undefined)[] = [];
  readonly #byKey = new Map<string, ReadonlySet<number>>();
  readonly #positions: number[] = [];
  /** Positions added since `start`: the first `#count` of `#positions` (never shrunk, so never regrown). */
  #count = 0;
  start(): void {
    this.#count = 0;
  }
  add(position: number): void {
    for (let i = 0; i < this.#count; i++) if (this.#positions[i] === position) return;
    this.#positions[this.#count++] = position;
  }
  /** The set of the positions added since `start`, or undefined when there were none. */
  finish(): ReadonlySet<number> | undefined {
    const count = this.#count;
    if (count === 0) return undefined;
    if (count === 1) {
      const position = this.#positions[0] as number;
      let set = this.#single[position];
      if (set === undefined) {
        set = new Set([position]);
        this.#single[position] = set;
      }
      return set;
    }
    // Positions are added in a fixed order for a given match (live order), so equal sets give equal keys
    // only when built alike; sorting makes the key the set's own.
    const positions = this.#positions.slice(0, count).sort((a, b) => a - b);
    const key = positions.join(',');
    let set = this.#byKey.get(key);
    if (set === undefined) {
      set = new Set(positions);
      this.#byKey.set(key, set);
    }
    return set;
  }
}

interface Listed {
  name: Buffer;
  kind: EntryKind;
}

/**
 * Lists a directory through its own handle, counting every entry against maxListedEntries. The handle's
 * real location is checked after listing, and before it unless the kernel proved the handle beneath the
 * root when it was opened (openat2 seam): a directory moved outside the root (renamed there by the agent,
 * which may write outside the workspace too) between its open and the end of its listing is never
 * trusted, its listing discarded with a gap. The check before listing adds nothing once the open itself
 * was proven: a move after the open is seen by the check after listing all the same, and a move out and
 * back within the listing escapes both checks alike (it shows names only, never bytes: every child is
 * opened and placed on its own).
 */
function listDirectory(state: AcquisitionState, dirFd: number, dirUri: string, isRoot: boolean): Listed[] {
  const { fs } = state;
  if (state.listingBudgetSpent) {
    state.gap(
      'listing_limit_exceeded',
      dirUri,
      'not listed: the budget of directory entries was already spent',
    );
    return [];
  }
  if (!isRoot && !fs.provenInside(dirFd) && !directoryIsInside(state, dirFd, dirUri)) return [];
  let dir: ReturnType<typeof fs.openListing>;
  try {
    dir = fs.openListing(dirFd);
  } catch (error) {
    rethrowCancelled(error);
    state.gap(
      'listing_failed',
      dirUri,
      `the directory could not be opened for listing (${errorCode(error)})`,
    );
    return [];
  }
  state.stats.directoriesListed++;
  const listed: Listed[] = [];
  try {
    for (;;) {
      state.checkCancelled();
      let dirent: ReturnType<typeof dir.readSync>;
      try {
        dirent = dir.readSync();
      } catch (error) {
        rethrowCancelled(error);
        state.gap(
          'listing_failed',
          dirUri,
          `listing failed midway (${errorCode(error)}); its entries were discarded`,
        );
        return [];
      }
      if (dirent === null) break;
      state.stats.entriesExamined++;
      if (state.stats.entriesExamined > state.limits.maxListedEntries) {
        state.gap(
          'listing_limit_exceeded',
          dirUri,
          `more than ${state.limits.maxListedEntries} directory entries examined`,
        );
        // This listing is discarded; files already listed elsewhere are still read.
        state.listingBudgetSpent = true;
        return [];
      }
      listed.push({ name: dirent.name, kind: entryKindOf(dirent) });
    }
  } finally {
    dir.closeSync();
  }
  if (!isRoot && !directoryIsInside(state, dirFd, dirUri)) return [];
  // Unsorted: matchListing sorts what it keeps.
  return listed;
}

function directoryIsInside(state: AcquisitionState, dirFd: number, dirUri: string): boolean {
  const placement = placeHandle(state.fs, dirFd, state.rootPath);
  if (placement.kind === 'inside') return true;
  if (placement.kind === 'outside') {
    state.gap('link_outside_root', dirUri, 'the directory is no longer inside the root; it was not listed');
  } else state.gap('confinement_unverified', dirUri, placement.detail);
  return false;
}

function visitChild(
  state: AcquisitionState,
  segments: readonly GlobSegment[],
  dirFd: number,
  place: Place,
  child: Child,
  ahead?: StatAhead,
): void {
  state.checkCancelled();
  if (state.manifest !== undefined) {
    // Manifest mode: every child is an entry; only real directories are descended (SPEC §12).
    const next = recordManifestChild(state, dirFd, child.name, child.uri, child.kind, ahead);
    if (next === 'descend' && child.next.size > 0) descend(state, segments, dirFd, place, child);
    return;
  }
  let kind = child.kind;
  if (kind === 'unknown') {
    try {
      const stat = state.fs.lstatAt(dirFd, child.name);
      kind = stat.isDirectory() ? 'directory' : stat.isSymbolicLink() ? 'symlink' : 'other';
    } catch (error) {
      rethrowCancelled(error);
      const code = errorCode(error);
      if (code !== 'ENOENT' && code !== 'ENOTDIR')
        state.gap('listing_failed', child.uri, `lookup failed (${code})`);
      return;
    }
  }
  if (kind === 'directory') {
    if (child.next.size > 0) descend(state, segments, dirFd, place, child);
    return;
  }
  let via = place.via;
  if (kind === 'symlink') {
    if (!child.candidate && child.next.size === 0) return;
    const resolution = resolveInRoot(state, [...realNamesOf(place), child.name], true);
    if (resolution.kind === 'resolved' && resolution.isDirectory) {
      // A directory beneath the root: descended where it really is (never a candidate itself).
      if (child.next.size > 0) descendLink(state, segments, place, child, resolution.names, resolution.hops);
      return;
    }
    via = joinVia(place.via, resolution.hops);
    if (resolution.kind !== 'resolved' && resolution.kind !== 'absent') {
      // The resolution left the root, looped or failed. A file the link reaches is still a candidate,
      // read or refused by the confined read as before (it follows the link and places the handle); a
      // directory it reaches is not descended, and that is the gap.
      const target = resolveLinkTarget(state, dirFd, child.name);
      if (target === 'directory') {
        const gap = child.next.size > 0 ? unresolvedGap(child.uri, resolution) : undefined;
        if (gap !== undefined) state.gap(gap.reason, gap.uri, gap.detail);
        return;
      }
      if (typeof target === 'object' && !child.candidate && child.next.size > 0) {
        state.gap('listing_failed', child.uri, `the symbolic link could not be resolved (${target.failed})`);
        return;
      }
    }
  }
  if (child.candidate) {
    countCandidate(state, child.uri);
    readCandidate(state, dirFd, child.name, child.uri, false, via);
  }
}

/**
 * Descends a link to a directory that resolves beneath the root: its real directory is opened again from
 * the root with no link on the way (linked-path.ts), listed under the link's uri, and every entry found
 * there records the links followed.
 */
function descendLink(
  state: AcquisitionState,
  segments: readonly GlobSegment[],
  place: Place,
  child: Child,
  real: Buffer[],
  hops: readonly LinkHop[],
): void {
  const fd = openRealDirectory(state, real, child.uri);
  if (fd === undefined || fd === 'absent') return;
  const isRoot = fd === state.rootFd;
  try {
    visitDirectory(
      state,
      segments,
      fd,
      { uri: child.uri, real, via: joinVia(place.via, hops) },
      child.next,
      isRoot,
    );
  } finally {
    if (!isRoot) state.fs.close(fd);
  }
}

function countCandidate(state: AcquisitionState, uri: string): void {
  state.stats.candidates++;
  if (state.stats.candidates > state.limits.maxFiles) {
    state.gap(
      'file_limit_exceeded',
      uri,
      `more than ${state.limits.maxFiles} files match; enumeration stopped here`,
    );
    throw new EnumerationStopped();
  }
}

function descend(
  state: AcquisitionState,
  segments: readonly GlobSegment[],
  dirFd: number,
  place: Place,
  child: Child,
): void {
  let childFd: number;
  try {
    childFd = state.fs.openDirectoryAt(dirFd, child.name);
  } catch (error) {
    rethrowCancelled(error);
    const code = errorCode(error);
    if (code === 'ENOENT') return;
    if (code === 'ENOTDIR' || code === 'ELOOP') {
      // Replaced since it was listed: by a symlink (never followed, the swap attack on a parent directory)
      // or by a file. Either way the subtree was never seen, and the object now at this path was never
      // matched as what it is: claiming complete coverage here would let an agent hide a file by
      // swapping it in for a directory mid-walk, so it is a gap.
      let isLink = false;
      try {
        isLink = state.fs.lstatAt(dirFd, child.name).isSymbolicLink();
      } catch (lstatError) {
        rethrowCancelled(lstatError);
        return; // Gone altogether: the path holds nothing now.
      }
      if (isLink)
        state.gap('link_not_followed', child.uri, 'replaced by a symbolic link while walking; not descended');
      else state.gap('listing_failed', child.uri, 'replaced by a non-directory while walking; not listed');
      return;
    }
    state.gap('listing_failed', child.uri, `the directory could not be opened (${code})`);
    return;
  }
  const childPlace: Place =
    place.real === undefined
      ? { uri: child.uri, real: undefined, via: undefined }
      : { uri: child.uri, real: [...place.real, child.name], via: place.via };
  try {
    visitDirectory(state, segments, childFd, childPlace, child.next, false);
  } finally {
    state.fs.close(childFd);
  }
}
