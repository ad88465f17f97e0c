import type { AcquisitionState } from './acquisition-state.js';
import { describeVia, openRealDirectory, resolveInRoot, unresolvedGap } from './linked-path.js';
import { recordManifestChild } from './manifest-entry.js';

/**
 * The manifest entry of one exact uri, looked up on its own (SPEC §13: a condition on an exact uri is
 * judged from that uri alone). A manifest's walk has budgets shared by the whole tree: an agent that
 * creates 1,100 empty files elsewhere makes it stop at `file_limit_exceeded`, and a condition on
 * `/.git/hooks/pre-commit` would be undetermined for a budget it has nothing to do with. This lookup has
 * budgets of its own and touches only the names on its path.
 *
 * It follows links the way a read of the path would, beneath the root only (resolve-beneath.ts), the last
 * name's link too, so `.git -> real-git` reaches the hook git runs; the entry records the links followed
 * (`via`). The object reached is recorded as the walk records a child (manifest-entry.ts): a file read
 * through the confined read, a directory, or anything else (a FIFO, a socket, a device) by its lstat alone,
 * never opened. A link that leaves the root, loops or cannot be read is a gap naming the uri; nothing at the
 * path is no entry and no gap (a proven negative).
 *
 * Returns the `via` of the entry recorded, if links were followed; the caller's thread sets it on the entry
 * once its read is complete.
 */
export function lookUpExact(
  state: AcquisitionState,
  uri: string,
  segments: readonly string[],
): string | undefined {
  state.checkCancelled();
  const resolution = resolveInRoot(
    state,
    segments.map((segment) => Buffer.from(segment)),
    true,
  );
  if (resolution.kind === 'absent') return undefined;
  if (resolution.kind !== 'resolved') {
    const gap = unresolvedGap(uri, resolution);
    if (gap !== undefined) state.gap(gap.reason, gap.uri, gap.detail);
    return undefined;
  }
  const via = describeVia(resolution.hops);
  const real = resolution.names;
  if (real.length === 0) {
    // A link to the root itself (`x -> .`): a directory, as the walk records one.
    const mode = state.fs.fstat(state.rootFd).mode & 0o7777;
    state.recorder?.add({ uri, type: 'directory', sizeBytes: 0, sha256: null, mode, linkTarget: null });
    return via;
  }
  const dirFd = openRealDirectory(state, real.slice(0, -1), uri);
  if (dirFd === undefined || dirFd === 'absent') return undefined;
  try {
    recordManifestChild(state, dirFd, real.at(-1) as Buffer, uri);
  } finally {
    if (dirFd !== state.rootFd) state.fs.close(dirFd);
  }
  return via;
}
