import fs from 'node:fs';
import { nativeCallError } from './errno-name.js';
import { AT_EMPTY_PATH, loadRawStatx, STATX_BUFFER_BYTES, statxDev } from './statx.js';

/**
 * Which object a handle or a path is, down to the mount it was reached through: device and inode name
 * the object, the mount id (the kernel's `mnt_id`, unique across the whole system while the mount exists)
 * names the mount. The same directory reached through another mount namespace (`/proc/<pid>/root/…`) or
 * another bind mount has the same device and inode but another mount id; below it, that namespace's
 * mounts apply, not ours. acquire-sync.ts uses this to require that the root handle is the directory its
 * kernel path names here, on the very mount that path crosses here.
 */
export interface MountedIdentity {
  readonly dev: number;
  readonly ino: number;
  readonly mountId: number;
}

export interface MountedIdentityOf {
  /** The handle's own identity (an O_PATH handle included). */
  ofFd(fd: number): MountedIdentity;
  /** The identity of what `path` names, by name, following links. */
  ofPath(path: Buffer): MountedIdentity;
}

const O_PATH = 0o10000000;
const O_CLOEXEC = 0o2000000;
const MNT_ID_LINE = /^mnt_id:\s*(\d+)$/m;

/** By fstat and the `mnt_id` line of `/proc/self/fdinfo/<fd>` (kernels since 3.15). */
export const procfsMountedIdentity: MountedIdentityOf = {
  ofFd(fd) {
    const stat = fs.fstatSync(fd);
    const mountId = MNT_ID_LINE.exec(fs.readFileSync(`/proc/self/fdinfo/${fd}`, 'latin1'))?.[1];
    if (mountId === undefined) throw nativeCallError('fdinfo', 61 /* ENODATA */);
    return { dev: stat.dev, ino: stat.ino, mountId: Number(mountId) };
  },
  ofPath(path) {
    const fd = fs.openSync(path, O_PATH | O_CLOEXEC);
    try {
      return procfsMountedIdentity.ofFd(fd);
    } finally {
      fs.closeSync(fd);
    }
  },
};

const STATX_INO = 0x100;
const STATX_MNT_ID = 0x1000;

let cached: { value: MountedIdentityOf | undefined } | undefined;

/**
 * The same by one statx(2) each (`STATX_MNT_ID`, kernels since 5.8), or undefined where statx cannot be
 * loaded, does not report the mount id, or disagrees with {@link procfsMountedIdentity} on probes.
 */
export function loadStatxMountedIdentity(): MountedIdentityOf | undefined {
  cached ??= { value: tryLoad() };
  return cached.value;
}

function tryLoad(): MountedIdentityOf | undefined {
  const loaded = loadRawStatx();
  if (loaded === undefined) return undefined;
  const { statx, errno } = loaded;
  const buffer = Buffer.alloc(STATX_BUFFER_BYTES);
  const empty = Buffer.alloc(1);
  let name = Buffer.alloc(256);
  const call = (dirFd: number, path: Buffer, flags: number): MountedIdentity => {
    if (Number(statx(dirFd, path, flags, STATX_INO | STATX_MNT_ID, buffer)) !== 0) {
      throw nativeCallError('statx', errno());
    }
    // stx_mask: a kernel that cannot report the mount id leaves its bit clear.
    if ((buffer.readUInt32LE(0) & STATX_MNT_ID) === 0) throw nativeCallError('statx', 95 /* EOPNOTSUPP */);
    return {
      dev: statxDev(buffer),
      ino: buffer.readUInt32LE(0x20) + buffer.readUInt32LE(0x24) * 2 ** 32,
      mountId: buffer.readUInt32LE(0x90) + buffer.readUInt32LE(0x94) * 2 ** 32,
    };
  };
  const AT_FDCWD = -100;
  const ours: MountedIdentityOf = {
    ofFd: (fd) => call(fd, empty, AT_EMPTY_PATH),
    ofPath: (path) => {
      if (path.includes(0)) throw nativeCallError('statx', 22 /* EINVAL */);
      if (path.length + 1 > name.length) name = Buffer.alloc(path.length * 2 + 1);
      path.copy(name, 0);
      name[path.length] = 0;
      return call(AT_FDCWD, name, 0);
    },
  };
  return agreesWithProcfs(ours) ? ours : undefined;
}

/** On `/` and `/proc` (another mount), by handle and by path, statx must say what fdinfo says. */
function agreesWithProcfs(ours: MountedIdentityOf): boolean {
  const fds: number[] = [];
  try {
    for (const probe of ['/', '/proc']) {
      const fd = fs.openSync(probe, O_PATH | O_CLOEXEC);
      fds.push(fd);
      const expected = procfsMountedIdentity.ofFd(fd);
      for (const got of [ours.ofFd(fd), ours.ofPath(Buffer.from(probe))]) {
        if (got.dev !== expected.dev || got.ino !== expected.ino || got.mountId !== expected.mountId) {
          return false;
        }
      }
    }
    return true;
  } catch {
    return false;
  } finally {
    for (const fd of fds) fs.closeSync(fd);
  }
}
