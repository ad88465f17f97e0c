import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { nativeCallError } from './errno-name.js';
import type { EntryStat, HandleStat } from './file-stat.js';

/**
 * statx(2) relative to a directory handle, through koffi, for the manifest walk: one system call per
 * entry instead of Node's lstat of `/proc/self/fd/N/name` (a longer path walk, and a Stats object with
 * four Date objects built for every file). It answers the same question — lstat of `name` in `dirFd`,
 * never following a final symlink — and is probed against Node's own lstat before it is trusted: a
 * layout, device encoding or time formula that disagrees leaves `loadStatx()` undefined and the walk on
 * `lstatAt`. Loaded once per thread.
 */

export type StatxAt = (dirFd: number, name: Buffer) => EntryStat;
/** fstat of a handle (any handle, O_PATH included), by statx with AT_EMPTY_PATH. */
export type StatxFd = (fd: number) => HandleStat;

export const AT_EMPTY_PATH = 0x1000;

const AT_SYMLINK_NOFOLLOW = 0x100;
/** STATX_BASIC_STATS: type, mode, nlink, uid, gid, times, ino, size, blocks. */
const STATX_BASIC_STATS = 0x7ff;
export const STATX_BUFFER_BYTES = 256;
const S_IFMT = 0o170000;

class StatxEntry implements HandleStat {
  constructor(
    readonly dev: number,
    readonly ino: number,
    readonly size: number,
    readonly mode: number,
    readonly mtimeMs: number,
    readonly ctimeMs: number,
  ) {}
  isFile(): boolean {
    return (this.mode & S_IFMT) === fs.constants.S_IFREG;
  }
  isDirectory(): boolean {
    return (this.mode & S_IFMT) === fs.constants.S_IFDIR;
  }
  isSymbolicLink(): boolean {
    return (this.mode & S_IFMT) === fs.constants.S_IFLNK;
  }
  isFIFO(): boolean {
    return (this.mode & S_IFMT) === fs.constants.S_IFIFO;
  }
  isSocket(): boolean {
    return (this.mode & S_IFMT) === fs.constants.S_IFSOCK;
  }
  isCharacterDevice(): boolean {
    return (this.mode & S_IFMT) === fs.constants.S_IFCHR;
  }
  isBlockDevice(): boolean {
    return (this.mode & S_IFMT) === fs.constants.S_IFBLK;
  }
}

/**
 * The entry stat with these numbers: how a stat taken on another thread (the second reader's, for a
 * reusing manifest: stat-ahead.ts) comes back as the same object `StatxAt` returns.
 */
export function entryStatOf(
  dev: number,
  ino: number,
  size: number,
  mode: number,
  mtimeMs: number,
  ctimeMs: number,
): EntryStat {
  return new StatxEntry(dev, ino, size, mode, mtimeMs, ctimeMs);
}

let cached: { at: StatxAt | undefined; fd: StatxFd | undefined } | undefined;

/** The handle-relative lstat, or undefined when statx cannot be used (or disagrees with Node's lstat). */
export function loadStatx(): StatxAt | undefined {
  cached ??= tryLoad();
  return cached.at;
}

/**
 * fstat of a handle by statx (one system call, no `fs.Stats` with its four `Date`s), or undefined when
 * statx cannot be used or disagrees with Node's fstat of the same handles (probed like `loadStatx`).
 */
export function loadStatxFd(): StatxFd | undefined {
  cached ??= tryLoad();
  return cached.fd;
}

export type KoffiFunction = (...args: unknown[]) => unknown;

/** The raw statx(2) call through koffi, and its errno; undefined where it cannot be loaded. */
export interface RawStatx {
  statx: KoffiFunction;
  errno: () => number;
}

let raw: { value: RawStatx | undefined } | undefined;

/** statx(2) itself, loaded once per thread (little-endian Linux only: the decoders assume it). */
export function loadRawStatx(): RawStatx | undefined {
  raw ??= { value: tryLoadRaw() };
  return raw.value;
}

function tryLoadRaw(): RawStatx | undefined {
  if (os.platform() !== 'linux' || os.endianness() !== 'LE') return undefined;
  try {
    const koffi = createRequire(import.meta.url)('koffi') as {
      load(path: string | null): { func(signature: string): KoffiFunction };
      errno(): number;
    };
    const statx = koffi
      .load(null)
      .func('int statx(int dirfd, const uint8_t *path, int flags, uint32_t mask, void *buf)');
    return { statx, errno: () => koffi.errno() };
  } catch {
    return undefined;
  }
}

function tryLoad(): { at: StatxAt | undefined; fd: StatxFd | undefined } {
  const loaded = loadRawStatx();
  if (loaded === undefined) return { at: undefined, fd: undefined };
  let at: StatxAt;
  let ofFd: StatxFd;
  try {
    at = bind(loaded.statx, loaded.errno);
    ofFd = bindFd(loaded.statx, loaded.errno);
  } catch {
    return { at: undefined, fd: undefined };
  }
  return { at: agreesWithNode(at) ? at : undefined, fd: fdAgreesWithNode(ofFd) ? ofFd : undefined };
}

/** Decodes st_dev from struct statx's dev_major/dev_minor as Node reports it (glibc's makedev). */
export function statxDev(buffer: Buffer): number {
  return makeDev(buffer.readUInt32LE(0x88), buffer.readUInt32LE(0x8c));
}

function makeDev(major: number, minor: number): number {
  return (major & 0xfff) * 0x100 + (minor & 0xff) + (minor & ~0xff) * 0x1000 + (major & ~0xfff) * 2 ** 32;
}

function bind(statx: KoffiFunction, errno: () => number): StatxAt {
  const fields = new StatxFields();
  let name = Buffer.alloc(256);
  return (dirFd, entry) => {
    if (entry.includes(0)) throw nativeCallError('statx', 22 /* EINVAL */);
    if (entry.length + 1 > name.length) name = Buffer.alloc(entry.length * 2 + 1);
    entry.copy(name, 0);
    name[entry.length] = 0;
    if (Number(statx(dirFd, name, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, fields.buffer)) !== 0) {
      throw nativeCallError('statx', errno());
    }
    return fields.decode();
  };
}

function bindFd(statx: KoffiFunction, errno: () => number): StatxFd {
  const fields = new StatxFields();
  const empty = Buffer.alloc(1);
  return (fd) => {
    // An empty path with AT_EMPTY_PATH: the handle itself, whatever it is (never a lookup by name).
    if (Number(statx(fd, empty, AT_EMPTY_PATH, STATX_BASIC_STATS, fields.buffer)) !== 0) {
      throw nativeCallError('statx', errno());
    }
    return fields.decode();
  };
}

/**
 * One `struct statx` buffer (linux/stat.h, the same layout on every architecture; little-endian here, as
 * tryLoadRaw requires) and 32-bit views of it: every field read is an indexed load, where Buffer's
 * readUInt32LE was a call with its own bounds checks per field (twelve of them per file).
 */
class StatxFields {
  readonly buffer = Buffer.alloc(STATX_BUFFER_BYTES);
  // A buffer of its own (never Node's pool) starts at offset 0 of its ArrayBuffer: aligned for both views.
  readonly #u32 = new Uint32Array(this.buffer.buffer, this.buffer.byteOffset, STATX_BUFFER_BYTES / 4);
  readonly #i32 = new Int32Array(this.buffer.buffer, this.buffer.byteOffset, STATX_BUFFER_BYTES / 4);

  decode(): StatxEntry {
    const u32 = this.#u32;
    const i32 = this.#i32;
    return new StatxEntry(
      makeDev(u32[0x88 / 4] as number, u32[0x8c / 4] as number),
      (u32[0x20 / 4] as number) + (u32[0x24 / 4] as number) * 2 ** 32,
      (u32[0x28 / 4] as number) + (u32[0x2c / 4] as number) * 2 ** 32,
      // stx_mode is the 16 bits at 0x1c: the low half of that word.
      (u32[0x1c / 4] as number) & 0xffff,
      // Node's own formula (ms = sec × 1e3 + nsec / 1e6), so both sides of a comparison agree.
      ((u32[0x70 / 4] as number) + (i32[0x74 / 4] as number) * 2 ** 32) * 1e3 +
        (u32[0x78 / 4] as number) / 1e6,
      ((u32[0x60 / 4] as number) + (i32[0x64 / 4] as number) * 2 ** 32) * 1e3 +
        (u32[0x68 / 4] as number) / 1e6,
    );
  }
}

/**
 * statx of open handles (a directory, a regular file, an O_PATH handle of this module's file) must say
 * exactly what Node's fstat says of them.
 */
function fdAgreesWithNode(ofFd: StatxFd): boolean {
  const file = new URL(import.meta.url).pathname;
  const fds: number[] = [];
  try {
    fds.push(fs.openSync('/', 'r'), fs.openSync(file, 'r'), fs.openSync(file, O_PATH_FLAG));
    for (const fd of fds) {
      const ours = ofFd(fd);
      const node = fs.fstatSync(fd);
      const same =
        ours.dev === node.dev &&
        ours.ino === node.ino &&
        ours.size === node.size &&
        ours.mode === node.mode &&
        ours.mtimeMs === node.mtimeMs &&
        ours.ctimeMs === node.ctimeMs &&
        ours.isDirectory() === node.isDirectory() &&
        ours.isFile() === node.isFile() &&
        ours.isFIFO() === node.isFIFO();
      if (!same) return false;
    }
    return true;
  } catch {
    return false;
  } finally {
    for (const fd of fds) fs.closeSync(fd);
  }
}

const O_PATH_FLAG = 0o10000000;

/** statx of the root directory and of this module's file must say exactly what Node's lstat says. */
function agreesWithNode(at: StatxAt): boolean {
  const probes = ['/', new URL(import.meta.url).pathname];
  try {
    for (const probe of probes) {
      const fd = fs.openSync(probe === '/' ? '/' : probe.slice(0, probe.lastIndexOf('/')) || '/', 'r');
      try {
        const name = probe === '/' ? '.' : probe.slice(probe.lastIndexOf('/') + 1);
        const ours = at(fd, Buffer.from(name));
        const node = fs.lstatSync(probe);
        const same =
          ours.dev === node.dev &&
          ours.ino === node.ino &&
          ours.size === node.size &&
          ours.mode === node.mode &&
          ours.mtimeMs === node.mtimeMs &&
          ours.ctimeMs === node.ctimeMs &&
          ours.isDirectory() === node.isDirectory() &&
          ours.isFile() === node.isFile();
        if (!same) return false;
      } finally {
        fs.closeSync(fd);
      }
    }
    return true;
  } catch {
    return false;
  }
}
