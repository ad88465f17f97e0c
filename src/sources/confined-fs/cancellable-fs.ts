import type { DirectoryListing } from './file-stat.js';
import { OperationCancelled } from './fs-errors.js';
import type { SurfaceFs } from './surface-fs.js';

/**
 * Wraps the seam so that once the caller's cancellation flag is set, no further I/O happens: every call
 * except `close` (and a listing's `closeSync`) throws {@link OperationCancelled} before touching the
 * file system. The walk checks the flag at every entry and chunk as well; this guard makes "no I/O after
 * cancellation" hold between those checks too, so an aborted acquisition of a workspace an attacker keeps
 * growing stops at once instead of at the next entry. Every catch in the walk lets this error through.
 */
export function cancellableFs(base: SurfaceFs, cancelled: () => boolean): SurfaceFs {
  const guard = <A extends unknown[], R>(call: (...args: A) => R) => {
    return (...args: A): R => {
      if (cancelled()) throw new OperationCancelled();
      return call(...args);
    };
  };
  return {
    resolveRoot: guard(base.resolveRoot),
    procIsTrusted: guard(base.procIsTrusted),
    openRoot: guard(base.openRoot),
    mountedIdentity: guard(base.mountedIdentity),
    mountedIdentityOfPath: guard(base.mountedIdentityOfPath),
    openDirectoryAt: guard(base.openDirectoryAt),
    openPathAt: guard(base.openPathAt),
    // No I/O: a lookup in the seam's own bookkeeping.
    provenInside: (fd) => base.provenInside(fd),
    lstatAt: guard(base.lstatAt),
    ...(base.entryStatAt === undefined ? {} : { entryStatAt: guard(base.entryStatAt) }),
    readlinkAt: guard(base.readlinkAt),
    handlePath: guard(base.handlePath),
    fstat: guard(base.fstat),
    reopenForRead: guard(base.reopenForRead),
    read: guard(base.read),
    openListing: guard((dirFd: number) => guardListing(base.openListing(dirFd), cancelled)),
    close: (fd) => base.close(fd),
    ...(base.closeHandles === undefined
      ? {}
      : { closeHandles: (fds: readonly number[]) => base.closeHandles?.(fds) }),
    ...(base.openDirectoriesAt === undefined ? {} : { openDirectoriesAt: guard(base.openDirectoriesAt) }),
    ...(base.openPathBeneath === undefined ? {} : { openPathBeneath: guard(base.openPathBeneath) }),
  };
}

function guardListing(dir: DirectoryListing, cancelled: () => boolean): DirectoryListing {
  // A plain object rather than a Proxy of the listing: the walk calls readSync once per name, and the
  // Proxy's trap (with a bound function made per call) was a few per cent of a listing-bound walk.
  return {
    readSync: () => {
      if (cancelled()) throw new OperationCancelled();
      return dir.readSync();
    },
    closeSync: () => dir.closeSync(),
  };
}
