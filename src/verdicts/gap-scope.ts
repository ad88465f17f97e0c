import { hasGlobSyntax, type ParsedLocator, parseLocator } from '../models/locator.js';
import type { Manifest } from '../models/manifest.js';
import type { CoverageGap } from '../models/observation.js';
import type { GapReason } from '../models/vocabulary.js';

/**
 * Which locations a gap of a manifest could hide. A gap at a uri hides that uri and everything beneath it
 * (a directory that could not be listed, a file that could not be read); a gap that stopped the whole
 * walk (a budget of files, an unavailable root) or names no single path hides everything. A verdict may
 * call a locator's evidence complete only when no gap could hide it: a sentinel in a directory nobody
 * could list has not been shown deleted.
 */

const GLOBAL_REASONS: ReadonlySet<GapReason> = new Set(['surface_root_unavailable', 'file_limit_exceeded']);

export function gapCouldHide(gap: CoverageGap, locator: ParsedLocator): boolean {
  const at = gapPath(gap);
  if (at === null) return true;
  const staticPrefix = staticSegments(locator);
  // Related when one path is an ancestor of (or equal to) the other.
  const n = Math.min(at.length, staticPrefix.length);
  for (let i = 0; i < n; i++) if (at[i] !== staticPrefix[i]) return false;
  if (locator.match === 'exact') return at.length <= staticPrefix.length;
  return true;
}

/** True when any of the gaps could hide the locator. */
export function gapsCouldHide(gaps: readonly CoverageGap[], locator: ParsedLocator): boolean {
  return gaps.some((gap) => gapCouldHide(gap, locator));
}

/** The gap's path segments, or null when it hides everything. */
function gapPath(gap: CoverageGap): string[] | null {
  if (GLOBAL_REASONS.has(gap.reason) || gap.uri === undefined) return null;
  if (gap.uri.split('/').some(hasGlobSyntax)) return null;
  try {
    return [...parseLocator(gap.uri, 'exact').segments];
  } catch {
    return null;
  }
}

/** The literal segments a locator starts with (all of them for an exact locator). */
function staticSegments(locator: ParsedLocator): string[] {
  if (locator.match === 'exact') return [...locator.segments];
  const out: string[] = [];
  for (const segment of locator.glob ?? []) {
    if (segment.kind !== 'literal') break;
    out.push(segment.name);
  }
  return out;
}

/**
 * True when the manifest could hide what is at `uri`: it was not taken, or a gap could hide the uri. A uri
 * the manifest looked up on its own (`lookups`: an exact lookup with budgets of its own) is hidden only by
 * a gap that names that very uri, never by a budget the walk ran out of elsewhere (SPEC §13).
 */
export function manifestCouldHide(manifest: Manifest, uri: string): boolean {
  if (manifest.acquisition === 'unavailable' || manifest.acquisition === 'error') return true;
  if (manifest.lookups?.includes(uri) === true) return manifest.coverage.gaps.some((gap) => gap.uri === uri);
  return gapsCouldHide(manifest.coverage.gaps, parseLocator(uri, 'exact'));
}
