import { parseLocator } from '../models/locator.js';
import type { Manifest, ManifestEntry } from '../models/manifest.js';
import { gapsCouldHide, manifestCouldHide } from './gap-scope.js';

/**
 * What a manifest says is at a uri, following symlinks the way the confined read does but lexically,
 * inside the manifest only: a relative target is resolved against the link's directory; an absolute
 * target, one that climbs above the root, a chain longer than {@link MAX_LINK_HOPS}, or a path through an
 * entry that is not a directory in the manifest is `unknown`, never guessed. `absent` is claimed only
 * when the manifest was taken and no gap could hide the uri.
 */
export type ManifestLookup =
  | { kind: 'entry'; entry: ManifestEntry }
  | { kind: 'absent' }
  | { kind: 'unknown' };

export const MAX_LINK_HOPS = 8;

const indexes = new WeakMap<Manifest, Map<string, ManifestEntry>>();

export function lookUpInManifest(manifest: Manifest, uri: string): ManifestLookup {
  if (manifest.acquisition === 'unavailable' || manifest.acquisition === 'error') return { kind: 'unknown' };
  let index = indexes.get(manifest);
  if (index === undefined) {
    index = new Map(manifest.entries.map((entry) => [entry.uri, entry]));
    indexes.set(manifest, index);
  }
  if (manifest.lookups?.includes(uri) === true) {
    // Looked up on its own, links beneath the root followed by the lookup itself (SPEC §13).
    const entry = index.get(uri);
    if (entry !== undefined) return { kind: 'entry', entry };
    return manifestCouldHide(manifest, uri) ? { kind: 'unknown' } : { kind: 'absent' };
  }
  let current = uri;
  for (let hop = 0; hop <= MAX_LINK_HOPS; hop++) {
    const segments = current.split('/').slice(1);
    for (let i = 1; i < segments.length; i++) {
      const parent = index.get(`/${segments.slice(0, i).join('/')}`);
      if (parent !== undefined && parent.type !== 'directory') return { kind: 'unknown' };
    }
    const entry = index.get(current);
    if (entry === undefined) {
      return gapsCouldHide(manifest.coverage.gaps, parseLocator(current, 'exact'))
        ? { kind: 'unknown' }
        : { kind: 'absent' };
    }
    if (entry.type !== 'symlink') return { kind: 'entry', entry };
    const next = entry.linkTarget === null ? null : resolveRelative(current, entry.linkTarget);
    if (next === null) return { kind: 'unknown' };
    current = next;
  }
  return { kind: 'unknown' };
}

/** The uri a relative link target names from the link's directory; null when absolute or escaping the root. */
function resolveRelative(linkUri: string, target: string): string | null {
  if (target.startsWith('/') || target === '') return null;
  const out = linkUri.split('/').slice(1, -1);
  for (const part of target.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (out.length === 0) return null;
      out.pop();
    } else out.push(part);
  }
  return out.length === 0 ? null : `/${out.join('/')}`;
}
