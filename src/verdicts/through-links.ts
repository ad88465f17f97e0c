import { type ParsedLocator, parseLocator } from '../models/locator.js';
import type { Manifest, ManifestEntry } from '../models/manifest.js';
import type { CoverageGap } from '../models/observation.js';
import { VIA_MAX_CHARS } from '../models/vocabulary.js';
import { gapsCouldHide } from './gap-scope.js';

/**
 * A manifest seen through its directory links (SPEC §13). A manifest records a link as a link, so a
 * condition on `/.git/hooks/*` was blind to a hook written through `.git -> real-git`: git follows the
 * link, the judge did not. This gives, from a manifest alone (pure: no I/O), the entries a path through an
 * in-root directory link reaches, each at that path with `via` naming the links, by the rule the exact
 * lookups follow in the file system (confined-fs/resolve-beneath.ts, RESOLVE_BENEATH): resolved component
 * by component from the root over the manifest's own entries, a relative target from the link's real
 * directory, `..` back to the real parent; an absolute target, a `..` above the root or more than
 * {@link MAX_LINKS} links is not followed. Nothing outside the manifest is ever named: the entries seen
 * through a link are the real directory's own entries, read (or not) by the confined walk.
 *
 * A directory link is followed once per chain of links: a link inside its own target, or back into a
 * directory the chain already went through, is a loop and is not followed again (the real directory is
 * still listed at its real path). At most {@link MAX_ENTRIES_THROUGH_LINKS} entries are seen through links;
 * past that, the links not expanded are gaps (`listing_limit_exceeded`), so a verdict is undetermined
 * rather than a wrong `false`.
 *
 * Gaps go through links too: a gap inside (or above) a link's target hides the same place seen through
 * the link. A link that is not followed is a gap at the link (`link_not_followed` for an absolute target
 * or a loop, `link_outside_root` for one climbing above the root); such a gap hides only locators that
 * name a path beneath the link ({@link linkGapCouldHide}), since a wildcard does not descend a link that
 * leaves the root (as git and a shell's globstar do not).
 */

/** Links followed in one resolution before it is called a loop (the kernel's MAXSYMLINKS). */
export const MAX_LINKS = 40;
/** Entries seen through links per manifest, at most. */
export const MAX_ENTRIES_THROUGH_LINKS = 100_000;

export interface SeenThroughLinks {
  /** Entries at paths through directory links, each with `via`, sorted by uri (none the manifest holds). */
  entries: ManifestEntry[];
  /**
   * The manifest's own links to regular files beneath the root, each seen as the file it reaches (that
   * file's type, size, digest and mode at the link's uri, with `via`), sorted by uri: what git or a shell
   * opening the path gets. The manifest's entry at that uri stays the link.
   */
  files: ManifestEntry[];
  /** Gaps at paths through links, and the links not followed. */
  gaps: CoverageGap[];
  /**
   * The manifest's links whose target cannot be told from it (absolute, climbing above the root, too many
   * links, or hidden by a gap): a file, a directory or nothing.
   */
  unresolved: Set<string>;
  /** For each entry seen through links, the real uri it is. */
  realUri: Map<string, string>;
}

type Resolution =
  | { kind: 'resolved'; uri: string; hops: string[] }
  | { kind: 'absent' }
  | { kind: 'hidden'; gap: CoverageGap }
  | { kind: 'not_followed'; gap: CoverageGap };

/** Gap reasons of a link that is not followed; they hide only what lies beneath the link. */
const UNFOLLOWED_LINK_REASONS: ReadonlySet<string> = new Set(['link_not_followed', 'link_outside_root']);

export function seeThroughLinks(
  manifest: Manifest,
  budget: number = MAX_ENTRIES_THROUGH_LINKS,
): SeenThroughLinks {
  const none: SeenThroughLinks = {
    entries: [],
    files: [],
    gaps: [],
    unresolved: new Set(),
    realUri: new Map(),
  };
  if (!manifest.entries.some((entry) => entry.type === 'symlink' && entry.via === undefined)) return none;
  const index = new Map(manifest.entries.map((entry) => [entry.uri, entry]));
  const links = resolveLinks(manifest, index);
  const { gaps, unresolved } = links;
  const files = [...links.fileViews.values()];
  if (links.targets.size === 0) return { ...none, files, gaps, unresolved };
  const expansion = new LinkExpansion(manifest, index, links, budget);
  expansion.run();
  return finish(expansion.entries, files, gaps, unresolved, expansion.realUri);
}

/** The manifest's own links, each resolved in it. */
interface ResolvedLinks {
  /** Each link to an in-root directory: that directory's real uri and the links the path went through. */
  targets: Map<string, { uri: string; via: string }>;
  /** Each link to an in-root regular file, seen as that file (keyed by the link's real uri). */
  fileViews: Map<string, ManifestEntry>;
  /** The links not followed, then (as the expansion goes) the gaps seen through links. */
  gaps: CoverageGap[];
  unresolved: Set<string>;
}

/** Resolves each of the manifest's own links: to a directory, to a file, to nothing, or a gap. */
function resolveLinks(manifest: Manifest, index: ReadonlyMap<string, ManifestEntry>): ResolvedLinks {
  const links: ResolvedLinks = { targets: new Map(), fileViews: new Map(), gaps: [], unresolved: new Set() };
  for (const entry of manifest.entries) {
    // An exact lookup's own entry (it has `via`) is already what its path reaches.
    if (entry.type !== 'symlink' || entry.via !== undefined) continue;
    const resolution = resolve(index, manifest, entry.uri);
    if (resolution.kind === 'resolved') {
      // One to the root itself is a loop (everything is beneath the root), listed at its real paths only.
      const reached = index.get(resolution.uri);
      if (reached?.type === 'directory') {
        links.targets.set(entry.uri, { uri: resolution.uri, via: joinVia(resolution.hops) });
      } else if (reached?.type === 'file') {
        // A hook planted as `pre-commit -> ../../payload.sh` is a file to git, and a link removed while
        // its file stays is a file gone from that path: both are judged at the link's uri as the file.
        links.fileViews.set(entry.uri, { ...reached, uri: entry.uri, via: joinVia(resolution.hops) });
      }
    } else if (resolution.kind !== 'absent') {
      links.gaps.push({ ...resolution.gap, uri: entry.uri });
      links.unresolved.add(entry.uri);
    }
  }
  return links;
}

/** A real directory listed at a path through links: where, by which links, and the real directories so far. */
interface SeenDirectory {
  /** Where the real directory is seen. */
  at: string;
  real: string;
  via: string;
  chain: ReadonlySet<string>;
}

/**
 * The directories reached through links, listed at their paths through the links, breadth first, within
 * the budget of entries; each directory link met on the way is followed in turn unless it loops.
 */
class LinkExpansion {
  readonly entries: ManifestEntry[] = [];
  readonly realUri = new Map<string, string>();
  readonly #manifest: Manifest;
  readonly #index: ReadonlyMap<string, ManifestEntry>;
  readonly #links: ResolvedLinks;
  readonly #budget: number;
  #budgetLeft: number;
  readonly #work: SeenDirectory[] = [];

  constructor(
    manifest: Manifest,
    index: ReadonlyMap<string, ManifestEntry>,
    links: ResolvedLinks,
    budget: number,
  ) {
    this.#manifest = manifest;
    this.#index = index;
    this.#links = links;
    this.#budget = budget;
    this.#budgetLeft = budget;
    for (const [link, target] of links.targets) {
      if (isAtOrBeneath(link, target.uri))
        this.#loop(link, target.via); // a link inside its own target
      else this.#work.push({ at: link, real: target.uri, via: target.via, chain: new Set([target.uri]) });
    }
  }

  /** Lists every directory reached, until none is left or the budget is spent. */
  run(): void {
    for (let item = this.#work.shift(); item !== undefined; item = this.#work.shift()) {
      for (const gap of this.#manifest.coverage.gaps) {
        const seen = gapThrough(gap, item);
        if (seen !== undefined) this.#links.gaps.push(seen);
      }
      if (!this.#list(item)) return;
    }
  }

  /**
   * The real directory's entries at their paths through the links; false when the budget ran out (then
   * this directory and those still to list are gaps).
   */
  #list(item: SeenDirectory): boolean {
    const sorted = this.#manifest.entries;
    const prefix = `${item.real}/`;
    for (let i = lowerBound(sorted, prefix); i < sorted.length; i++) {
      const entry = sorted[i] as ManifestEntry;
      if (!entry.uri.startsWith(prefix)) break;
      if (entry.via !== undefined) continue;
      const uri = item.at + entry.uri.slice(item.real.length);
      if (this.#index.has(uri) || this.realUri.has(uri)) continue;
      if (this.#budgetLeft-- <= 0) {
        for (const { at } of [item, ...this.#work]) {
          this.#links.gaps.push({
            reason: 'listing_limit_exceeded',
            uri: at,
            detail: `more than ${this.#budget} entries are seen through links`,
          });
        }
        return false;
      }
      this.#add(item, entry, uri);
    }
    return true;
  }

  /** One entry seen at `uri`; a directory link among them is followed in turn, unless it loops. */
  #add(item: SeenDirectory, entry: ManifestEntry, uri: string): void {
    // A link to a file seen through a directory link is that file there too.
    const fileView = this.#links.fileViews.get(entry.uri);
    this.entries.push(
      fileView === undefined
        ? { ...entry, uri, via: item.via }
        : { ...fileView, uri, via: joinVia([item.via, fileView.via ?? '']) },
    );
    this.realUri.set(uri, entry.uri);
    const target = this.#links.targets.get(entry.uri);
    if (target === undefined) return;
    if (item.chain.has(target.uri) || isAtOrBeneath(entry.uri, target.uri)) {
      this.#loop(uri, joinVia([item.via, target.via]));
      return;
    }
    this.#work.push({
      at: uri,
      real: target.uri,
      via: joinVia([item.via, target.via]),
      chain: new Set([...item.chain, target.uri]),
    });
  }

  /** A link back into a directory its chain went through: not followed again, a gap beneath it. */
  #loop(at: string, via: string): void {
    this.#links.gaps.push({ reason: 'link_not_followed', uri: at, detail: `the links loop: ${via}` });
  }
}

/**
 * Whether a gap could hide the locator. A gap of a link that is not followed hides only a locator whose
 * literal start goes beneath the link; every other gap as gap-scope.ts says.
 */
export function linkGapCouldHide(gap: CoverageGap, locator: ParsedLocator): boolean {
  if (!UNFOLLOWED_LINK_REASONS.has(gap.reason) || gap.uri === undefined) return gapsCouldHide([gap], locator);
  const link = gap.uri.split('/').slice(1);
  const literal: string[] = [];
  let segments: number;
  if (locator.match === 'exact') {
    literal.push(...locator.segments);
    segments = literal.length;
  } else {
    const glob = locator.glob ?? [];
    segments = glob.length;
    for (const segment of glob) {
      if (segment.kind !== 'literal') break;
      literal.push(segment.name);
    }
  }
  // The locator names the link by its literal start and goes on beneath it.
  if (literal.length < link.length || segments <= link.length) return false;
  return link.every((name, i) => literal[i] === name);
}

/**
 * The real uri a path names in the manifest, links followed by the RESOLVE_BENEATH rule (the last name
 * too). `absent` when a name is not in the manifest and no gap could hide it, or a non-directory stands
 * where a directory must be.
 */
export function resolveInManifest(manifest: Manifest, uri: string): string | null {
  return resolveAllInManifest(manifest, [uri])[0] ?? null;
}

/**
 * {@link resolveInManifest} for many uris of one manifest (its index built once), in order; with
 * `followLast` a last name that is a link is followed too (the file a path opens).
 */
export function resolveAllInManifest(
  manifest: Manifest,
  uris: readonly string[],
  followLast = false,
): (string | null)[] {
  const index = new Map(manifest.entries.map((entry) => [entry.uri, entry]));
  return uris.map((uri) => {
    const resolution = resolve(index, manifest, uri, followLast);
    return resolution.kind === 'resolved' ? resolution.uri : null;
  });
}

function resolve(
  index: ReadonlyMap<string, ManifestEntry>,
  manifest: Manifest,
  uri: string,
  followLast = true,
): Resolution {
  const pending = uri.split('/').slice(1).reverse();
  const real: string[] = [];
  const hops: string[] = [];
  while (pending.length > 0) {
    const name = pending.pop() as string;
    if (name === '' || name === '.') continue;
    if (name === '..') {
      if (real.length === 0) {
        return {
          kind: 'not_followed',
          gap: { reason: 'link_outside_root', detail: `${hops.join(', ')}: climbs above the root` },
        };
      }
      real.pop();
      continue;
    }
    const at = `/${[...real, name].join('/')}`;
    const entry = index.get(at);
    if (entry === undefined || entry.via !== undefined) {
      const hiding = manifest.coverage.gaps.find((gap) => gapsCouldHide([gap], parseLocator(at, 'exact')));
      return hiding === undefined ? { kind: 'absent' } : { kind: 'hidden', gap: hiding };
    }
    const last = pending.length === 0;
    if (entry.type === 'symlink' && (followLast || !last)) {
      const target = entry.linkTarget ?? '';
      hops.push(`${at} -> ${target}`);
      if (hops.length > MAX_LINKS) {
        return { kind: 'not_followed', gap: { reason: 'link_not_followed', detail: 'the links loop' } };
      }
      if (target.startsWith('/') || target === '') {
        return {
          kind: 'not_followed',
          gap: { reason: 'link_not_followed', detail: `${at} -> ${target}: an absolute target` },
        };
      }
      pending.push(...target.split('/').reverse());
      continue;
    }
    if (!last && entry.type !== 'directory') return { kind: 'absent' };
    real.push(name);
  }
  return { kind: 'resolved', uri: real.length === 0 ? '' : `/${real.join('/')}`, hops };
}

/** The gap as seen through a link, when it lies at, beneath or above the link's real directory. */
function gapThrough(
  gap: CoverageGap,
  item: { at: string; real: string; via: string },
): CoverageGap | undefined {
  if (gap.uri === undefined) return undefined; // hides everything already
  const detail = `through ${item.via}${gap.detail === undefined ? '' : `: ${gap.detail}`}`;
  if (isAtOrBeneath(gap.uri, item.real)) {
    return { reason: gap.reason, uri: item.at + gap.uri.slice(item.real.length), detail };
  }
  if (isAtOrBeneath(item.real, gap.uri)) return { reason: gap.reason, uri: item.at, detail };
  return undefined;
}

function finish(
  entries: ManifestEntry[],
  files: ManifestEntry[],
  gaps: CoverageGap[],
  unresolved: Set<string>,
  realUri: Map<string, string>,
): SeenThroughLinks {
  entries.sort((a, b) => (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0));
  return { entries, files, gaps, unresolved, realUri };
}

function isAtOrBeneath(uri: string, directory: string): boolean {
  return uri === directory || uri.startsWith(`${directory}/`);
}

function joinVia(parts: readonly string[]): string {
  const joined = parts.filter((part) => part !== '').join(', ');
  return joined.length <= VIA_MAX_CHARS ? joined : `${joined.slice(0, VIA_MAX_CHARS - 24)} (and more links)`;
}

/** The first index whose uri is not below `key` (entries are sorted by uri). */
function lowerBound(entries: readonly ManifestEntry[], key: string): number {
  let lo = 0;
  let hi = entries.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((entries[mid] as ManifestEntry).uri < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
