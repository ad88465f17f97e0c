import type { CoverageGap } from '../../models/observation.js';
import { VIA_MAX_CHARS } from '../../models/vocabulary.js';
import { errorCode, rethrowCancelled } from '../confined-fs/fs-errors.js';
import {
  type LinkHop,
  MAX_LINKS,
  type Resolution,
  resolveBeneath,
  uriOf,
} from '../confined-fs/resolve-beneath.js';
import type { AcquisitionState } from './acquisition-state.js';

/**
 * Following symbolic links beneath the root during a walk (SPEC §13): what git, a shell or an editor
 * would reach inside the workspace is what is judged. Paths are resolved component by component beneath
 * the root handle (confined-fs/resolve-beneath.ts, the RESOLVE_BENEATH rule on both seams); the real
 * directory found is then opened again by its real names from the root with no link allowed anywhere
 * (RESOLVE_NO_SYMLINKS on the openat2 seam, O_NOFOLLOW per name on procfs), so what is listed or read is
 * the object the resolution named, never one a link swapped in meanwhile points at. A link that leaves the
 * root stays a gap; the links followed are recorded on each entry reached through them (`via`).
 */

/** The links followed, as an entry's `via`: `/.git -> real-git`, several joined by `, `, bounded. */
export function describeVia(hops: readonly LinkHop[]): string | undefined {
  if (hops.length === 0) return undefined;
  let out = '';
  for (let i = 0; i < hops.length; i++) {
    const hop = hops[i] as LinkHop;
    const part = `${i === 0 ? '' : ', '}${hop.uri} -> ${hop.target}`;
    const rest = hops.length - i;
    // Room kept for the note that says how many links were left out.
    if (out.length + part.length > VIA_MAX_CHARS - 40) {
      return `${out.slice(0, VIA_MAX_CHARS - 40)} (and ${rest} more link${rest === 1 ? '' : 's'})`;
    }
    out += part;
  }
  return out;
}

/** Joins two vias (a directory's, then the links below it). */
export function joinVia(before: string | undefined, hops: readonly LinkHop[]): string | undefined {
  const after = describeVia(hops);
  if (before === undefined) return after;
  if (after === undefined) return before;
  const joined = `${before}, ${after}`;
  return joined.length <= VIA_MAX_CHARS ? joined : `${joined.slice(0, VIA_MAX_CHARS - 24)} (and more links)`;
}

/**
 * The gap a resolution that did not reach an object calls for, at `uri`; none for `absent` (nothing is at
 * the path: a proven negative) or `resolved`.
 */
export function unresolvedGap(uri: string, resolution: Resolution): CoverageGap | undefined {
  switch (resolution.kind) {
    case 'resolved':
    case 'absent':
      return undefined;
    case 'leaves_root': {
      const { hop } = resolution;
      return resolution.absolute
        ? {
            reason: 'link_not_followed',
            uri,
            detail: `${hop.uri} is an absolute symbolic link (-> ${hop.target}); only a link that resolves beneath the root is followed`,
          }
        : {
            reason: 'link_outside_root',
            uri,
            detail: `${hop.uri} -> ${hop.target} resolves outside the root; it was not followed`,
          };
    }
    case 'loop':
      return {
        reason: 'link_not_followed',
        uri,
        detail: `more than ${MAX_LINKS} symbolic links on the way (a loop); not followed`,
      };
    case 'failed':
      return {
        reason: 'listing_failed',
        uri,
        detail: `${resolution.uri}: lookup failed (${resolution.code})`,
      };
  }
}

/** Resolves `names` below the root of `state`, following links beneath it (the last too, with `followLast`). */
export function resolveInRoot(
  state: AcquisitionState,
  names: readonly Buffer[],
  followLast: boolean,
): Resolution {
  return resolveBeneath(state.fs, state.rootFd, names, followLast);
}

/**
 * Opens the real directory `names` (link-free, from a resolution) from the root handle: in one lookup with
 * no link allowed where the seam can (openat2), else one name at a time, each O_NOFOLLOW. Returns the
 * handle (the root's own when `names` is empty: the caller must not close that one), 'absent' when a name
 * is gone, or undefined when a gap was recorded (something changed since the resolution).
 */
export function openRealDirectory(
  state: AcquisitionState,
  names: readonly Buffer[],
  uri: string,
): number | 'absent' | undefined {
  const { fs } = state;
  if (names.length === 0) return state.rootFd;
  const whole = fs.openDirectoriesAt?.(state.rootFd, names);
  if (whole !== undefined) return whole;
  let fd = state.rootFd;
  for (let i = 0; i < names.length; i++) {
    let next: number;
    try {
      next = fs.openDirectoryAt(fd, names[i] as Buffer);
    } catch (error) {
      rethrowCancelled(error);
      if (fd !== state.rootFd) fs.close(fd);
      const code = errorCode(error);
      if (code === 'ENOENT') return 'absent';
      state.gap(
        'listing_failed',
        uri,
        `${uriOf(names.slice(0, i + 1))} changed while the links on the way were resolved (${code})`,
      );
      return undefined;
    }
    if (fd !== state.rootFd) fs.close(fd);
    fd = next;
  }
  return fd;
}

/**
 * The links a read of the last name `name` (in the real directory `parent`) follows, when that name is a
 * symbolic link: the hops of its resolution beneath the root, or, for a link the resolution refuses (an
 * absolute one, which the confined read still follows and places by its handle), that one link.
 */
export function finalLinkHops(
  state: AcquisitionState,
  parent: readonly Buffer[],
  dirFd: number,
  name: Buffer,
): LinkHop[] {
  let isLink = false;
  try {
    isLink = state.fs.lstatAt(dirFd, name).isSymbolicLink();
  } catch (error) {
    rethrowCancelled(error);
    return [];
  }
  if (!isLink) return [];
  // Every kind of answer carries the links it followed, the refused one included; a link gone or replaced
  // since the lstat gives none, and the read decides what is there.
  return resolveInRoot(state, [...parent, name], true).hops;
}
