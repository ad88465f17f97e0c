import type { DirectoryListing } from '../../../src/sources/confined-fs/file-stat.js';
import { nodeSurfaceFs, type SurfaceFs } from '../../../src/sources/confined-fs/surface-fs.js';

/**
 * A SurfaceFs that forwards to the real one and records every call, so tests count side effects (bytes
 * read, directories listed, names returned by listings) instead of trusting the source's own stats.
 */

export type FsOp = Exclude<keyof SurfaceFs, 'procIsTrusted'> | 'procIsTrusted';

export interface RecordedCall {
  op: FsOp;
  /** Where the call acted: the handle's kernel path (for listings and reads) or the child path. */
  where?: string;
}

export interface Recording {
  calls: RecordedCall[];
  /** Kernel path of every directory listed, in order. */
  listed: string[];
  /** Every name a listing returned, as `<directory path>/<name>`. */
  listedNames: string[];
  /** Kernel path of every file a read handle was opened on (reopenForRead). */
  opened: string[];
  /** Bytes returned by read(), per kernel path of the file. */
  bytesByPath: Map<string, number>;
  /** Bytes returned by read() in total. */
  bytesRead: number;
  /** Handles opened and not yet closed. */
  openFds: Set<number>;
}

export interface RecordingOptions {
  /** Called before every operation; may throw (inject a failure) or swap things on disk (a race). */
  before?: (op: FsOp, args: readonly unknown[]) => void;
}

export function recordingFs(
  options: RecordingOptions = {},
  base: SurfaceFs = nodeSurfaceFs,
): { fs: SurfaceFs; recording: Recording } {
  const recording: Recording = {
    calls: [],
    listed: [],
    listedNames: [],
    opened: [],
    bytesByPath: new Map(),
    bytesRead: 0,
    openFds: new Set(),
  };
  const readPaths = new Map<number, string>();
  // The recorder asks the real kernel where a handle is, never `base`: a seam under test may lie.
  const pathOf = (fd: number): string => {
    try {
      return nodeSurfaceFs.handlePath(fd).toString('latin1');
    } catch {
      return `<fd ${fd}>`;
    }
  };
  const hook = (op: FsOp, args: readonly unknown[], where?: string) => {
    recording.calls.push(where === undefined ? { op } : { op, where });
    options.before?.(op, args);
  };
  const opened = (fd: number) => {
    recording.openFds.add(fd);
    return fd;
  };
  const fs: SurfaceFs = {
    resolveRoot: (path) => {
      hook('resolveRoot', [path], path);
      return base.resolveRoot(path);
    },
    procIsTrusted: () => {
      hook('procIsTrusted', []);
      return base.procIsTrusted();
    },
    openRoot: (path) => {
      hook('openRoot', [path], path);
      return opened(base.openRoot(path));
    },
    mountedIdentity: (fd) => {
      hook('mountedIdentity', [fd]);
      return base.mountedIdentity(fd);
    },
    mountedIdentityOfPath: (path) => {
      hook('mountedIdentityOfPath', [path], path.toString('latin1'));
      return base.mountedIdentityOfPath(path);
    },
    openDirectoryAt: (dirFd, name) => {
      hook('openDirectoryAt', [dirFd, name], `${pathOf(dirFd)}/${name.toString('latin1')}`);
      return opened(base.openDirectoryAt(dirFd, name));
    },
    openPathAt: (dirFd, name, noFollow) => {
      hook('openPathAt', [dirFd, name, noFollow], `${pathOf(dirFd)}/${name.toString('latin1')}`);
      return opened(base.openPathAt(dirFd, name, noFollow));
    },
    provenInside: (fd) => base.provenInside(fd),
    lstatAt: (dirFd, name) => {
      hook('lstatAt', [dirFd, name], `${pathOf(dirFd)}/${name.toString('latin1')}`);
      return base.lstatAt(dirFd, name);
    },
    readlinkAt: (dirFd, name) => {
      hook('readlinkAt', [dirFd, name], `${pathOf(dirFd)}/${name.toString('latin1')}`);
      return base.readlinkAt(dirFd, name);
    },
    handlePath: (fd) => {
      hook('handlePath', [fd]);
      return base.handlePath(fd);
    },
    fstat: (fd) => {
      hook('fstat', [fd]);
      return base.fstat(fd);
    },
    reopenForRead: (pathFd) => {
      const where = pathOf(pathFd);
      hook('reopenForRead', [pathFd], where);
      const fd = opened(base.reopenForRead(pathFd));
      // Where the read handle really is, as the kernel reports it for the handle actually read.
      const actual = pathOf(fd);
      readPaths.set(fd, actual);
      recording.opened.push(actual);
      return fd;
    },
    read: (fd, buffer, length) => {
      hook('read', [fd, length]);
      const count = base.read(fd, buffer, length);
      const where = readPaths.get(fd) ?? `<fd ${fd}>`;
      recording.bytesRead += count;
      recording.bytesByPath.set(where, (recording.bytesByPath.get(where) ?? 0) + count);
      return count;
    },
    openListing: (dirFd) => {
      const where = pathOf(dirFd);
      hook('openListing', [dirFd], where);
      const dir = base.openListing(dirFd);
      recording.listed.push(where);
      return recordListing(dir, where, recording);
    },
    close: (fd) => {
      recording.calls.push({ op: 'close' });
      recording.openFds.delete(fd);
      readPaths.delete(fd);
      base.close(fd);
    },
  };
  // The openat2 seam's one-lookup open of an exact locator's parents (exact-walk.ts), recorded like the
  // opens it stands for, so suites wrapping that seam (the swap race among them) run the walk as the seam
  // alone would.
  const { openDirectoriesAt } = base;
  const joined = (dirFd: number, names: readonly Buffer[]) =>
    `${pathOf(dirFd)}/${names.map((name) => name.toString('latin1')).join('/')}`;
  if (openDirectoriesAt !== undefined) {
    fs.openDirectoriesAt = (dirFd, names) => {
      hook('openDirectoriesAt', [dirFd, names], joined(dirFd, names));
      const fd = openDirectoriesAt.call(base, dirFd, names);
      return fd === undefined ? undefined : opened(fd);
    };
  }
  return { fs, recording };
}

/** Wraps a Dir so that every name it returns is recorded with the listed directory's path. */
function recordListing(dir: DirectoryListing, where: string, recording: Recording): DirectoryListing {
  return new Proxy(dir, {
    get(target, property) {
      if (property === 'readSync') {
        return () => {
          const dirent = target.readSync();
          if (dirent !== null) {
            const name = dirent.name;
            recording.listedNames.push(`${where}/${name.toString('latin1')}`);
          }
          return dirent;
        };
      }
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
