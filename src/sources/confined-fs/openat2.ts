import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { errnoName } from './errno-name.js';

/**
 * openat2(2) and a few other handle-relative calls, reached through koffi (a maintained FFI whose npm
 * package carries prebuilt binaries). Loaded once per thread, on first use, and probed before it is
 * trusted: a kernel older than 5.6, a seccomp filter that denies the call, or a koffi that cannot load
 * all leave `loadOpenat2()` returning the reason, and the caller keeps the procfs implementation.
 *
 * The calls are exported for other confined code (the sandbox's cleanup can remove entries relative to
 * a directory handle with {@link Openat2Binding.unlinkat}).
 */

/** `resolve` flags of `struct open_how` (linux/openat2.h). */
export const RESOLVE_NO_MAGICLINKS = 0x02;
export const RESOLVE_NO_SYMLINKS = 0x04;
export const RESOLVE_BENEATH = 0x08;

/** unlinkat(2) flag: remove a directory (rmdir) instead of a file. */
export const AT_REMOVEDIR = 0x200;

/** openat2 is 437 in the unified syscall table on every Linux architecture Node runs on; close_range 436. */
const SYS_OPENAT2 = 437;
const SYS_CLOSE_RANGE = 436;
const OPEN_HOW_SIZE = 24;
const SUPPORTED_ARCHES: readonly string[] = ['x64', 'arm64', 'riscv64', 'ppc64', 's390x', 'loong64'];

const O_PATH = 0o10000000;
const PATH_MAX = 4096;
const O_CLOEXEC = 0o2000000;
const EXDEV = 18;
const EAGAIN = 11;
const EINTR = 4;
/**
 * How often a call the kernel answered EAGAIN is repeated. With RESOLVE_BENEATH, a `..` (or a relative link
 * such as `up -> ../b.txt`) is refused with EAGAIN whenever a rename or mount happened anywhere on the
 * machine during the lookup, and openat2(2) says to retry: without it, a busy machine sends every such
 * open to the procfs route (correct, slower) and can fail the availability probe.
 */
const EAGAIN_RETRIES = 16;

/** A failed call: the errno as Node names it (`EXDEV`, `ELOOP`, …), so callers share one vocabulary. */
export class Openat2Error extends Error {
  readonly code: string;
  readonly errno: number;
  constructor(syscall: string, errno: number) {
    const code = errnoName(errno);
    super(`${syscall} failed (${code})`);
    this.name = 'Openat2Error';
    this.code = code;
    this.errno = errno;
  }
}

export interface Openat2Binding {
  /** openat2(dirFd, path, { flags, mode: 0, resolve }); `path` is bytes without a NUL. Throws Openat2Error. */
  openat2(dirFd: number, path: Buffer, flags: number, resolve: number): number;
  /**
   * openat(dirFd, name, flags): a plain handle-relative open (no resolve restrictions). Used only to
   * reopen an O_PATH handle through a held `/proc/self/fd` directory handle. Throws Openat2Error.
   */
  openat(dirFd: number, name: Buffer, flags: number): number;
  /**
   * readlinkat(dirFd, name): the link's target as bytes, up to PATH_MAX (4,096) bytes as Node's
   * readlink returns it. Used only for `/proc/self/fd` entries, relative to a held handle of that
   * directory. Throws Openat2Error.
   */
  readlinkat(dirFd: number, name: Buffer): Buffer;
  /** unlinkat(dirFd, name, flags): removes `name` in the directory handle, never following a symlink. */
  unlinkat(dirFd: number, name: Buffer, flags: number): void;
  /** mkdirat(dirFd, name, mode). */
  mkdirat(dirFd: number, name: Buffer, mode: number): void;
  /** close(2) for handles this binding opened (Node's fs.closeSync warns about them in worker threads). */
  close(fd: number): void;
  /**
   * read(2) of up to `length` bytes (at most `buffer.length`) into the start of `buffer`, at the handle's
   * position, repeated on EINTR as libuv repeats it: what `fs.readSync(fd, buffer, 0, length, null)`
   * does, in one crossing instead of Node's argument checks and request. Throws Openat2Error.
   */
  read(fd: number, buffer: Buffer, length: number): number;
  /**
   * close_range(first, last, 0) (Linux ≥ 5.9): closes every handle numbered first…last in one call. The
   * caller must own every number in the range. Returns false, closing nothing, when the call fails for
   * any reason (a kernel without it, a seccomp filter that denies it); never throws for the kernel's answer.
   */
  closeRange(first: number, last: number): boolean;
}

export type Openat2Availability =
  | { available: true; binding: Openat2Binding }
  | { available: false; reason: string };

let cached: Openat2Availability | undefined;

/** The binding, loaded and probed once per thread; never throws. */
export function loadOpenat2(): Openat2Availability {
  cached ??= tryLoad();
  return cached;
}

function tryLoad(): Openat2Availability {
  if (os.platform() !== 'linux') return { available: false, reason: 'openat2 exists only on Linux' };
  if (!SUPPORTED_ARCHES.includes(os.arch())) {
    return { available: false, reason: `openat2 is not wired for the ${os.arch()} architecture` };
  }
  let binding: Openat2Binding;
  try {
    binding = bind(createRequire(import.meta.url)('koffi') as Koffi);
  } catch (error) {
    return { available: false, reason: `koffi could not be loaded (${messageOf(error)})` };
  }
  const problem = probe(binding);
  return problem === undefined ? { available: true, binding } : { available: false, reason: problem };
}

/**
 * Proves the kernel honours RESOLVE_BENEATH before anything relies on it: `..` from `/` must fail with
 * EXDEV (a kernel or filter that ignored the flag would return `/` itself), and `.` must open.
 */
function probe(binding: Openat2Binding): string | undefined {
  let rootFd: number;
  try {
    rootFd = fs.openSync('/', O_PATH | O_CLOEXEC | fs.constants.O_DIRECTORY);
  } catch (error) {
    return `'/' could not be opened (${messageOf(error)})`;
  }
  try {
    try {
      binding.close(binding.openat2(rootFd, Buffer.from('.'), O_PATH | O_CLOEXEC, RESOLVE_BENEATH));
    } catch (error) {
      return `openat2 is not usable here (${messageOf(error)})`;
    }
    try {
      const escaped = binding.openat2(rootFd, Buffer.from('..'), O_PATH | O_CLOEXEC, RESOLVE_BENEATH);
      binding.close(escaped);
      return 'openat2 ignored RESOLVE_BENEATH';
    } catch (error) {
      if ((error as Openat2Error).errno !== EXDEV) return `openat2 probe failed (${messageOf(error)})`;
    }
    return undefined;
  } finally {
    fs.closeSync(rootFd);
  }
}

type KoffiFunction = (...args: unknown[]) => unknown;
interface Koffi {
  load(path: string | null): { func(signature: string): KoffiFunction };
  errno(): number;
}

function bind(koffi: Koffi): Openat2Binding {
  const libc = koffi.load(null);
  // syscall(2) is variadic; declared with fixed integer and pointer arguments, which every supported
  // ABI passes in the same registers as the variadic form (glibc's syscall never reads va_args).
  const syscall = libc.func('long syscall(long nr, int dirfd, const uint8_t *path, void *how, size_t size)');
  const unlinkat = libc.func('int unlinkat(int dirfd, const uint8_t *path, int flags)');
  const mkdirat = libc.func('int mkdirat(int dirfd, const uint8_t *path, uint32_t mode)');
  const openat = libc.func('int openat(int dirfd, const uint8_t *path, int flags, uint32_t mode)');
  const close = libc.func('int close(int fd)');
  const readlinkat = libc.func('long readlinkat(int dirfd, const uint8_t *path, void *buf, size_t size)');
  const read = libc.func('long read(int fd, void *buf, size_t count)');
  // Through syscall(2): glibc before 2.34 has no close_range wrapper.
  const closeRange = libc.func('long syscall(long nr, uint32_t first, uint32_t last, uint32_t flags)');
  const target = Buffer.allocUnsafe(PATH_MAX + 1);
  const args = new CallArguments();
  return {
    openat2(dirFd, path, flags, resolve) {
      // NUL inside a name would silently shorten the path the kernel sees.
      if (path.includes(0)) throw new Openat2Error('openat2', 22 /* EINVAL */);
      if (resolve < 0 || resolve > 0xff) throw new Openat2Error('openat2', 22);
      const how = args.how(flags, resolve);
      const name = args.cString(path);
      for (let attempt = 0; ; attempt++) {
        const fd = Number(syscall(SYS_OPENAT2, dirFd, name, how, OPEN_HOW_SIZE));
        if (fd >= 0) return fd;
        const errno = koffi.errno();
        if (errno !== EAGAIN || attempt >= EAGAIN_RETRIES) throw new Openat2Error('openat2', errno);
      }
    },
    openat(dirFd, name, flags) {
      if (name.includes(0)) throw new Openat2Error('openat', 22);
      const fd = Number(openat(dirFd, args.cString(name), flags, 0));
      if (fd < 0) throw new Openat2Error('openat', koffi.errno());
      return fd;
    },
    readlinkat(dirFd, name) {
      if (name.includes(0)) throw new Openat2Error('readlinkat', 22);
      // libuv's readlink: a PATH_MAX buffer, and a target that fills it is returned as it is.
      const length = Number(readlinkat(dirFd, args.cString(name), target, PATH_MAX));
      if (length < 0) throw new Openat2Error('readlinkat', koffi.errno());
      return Buffer.from(target.subarray(0, length));
    },
    unlinkat(dirFd, name, flags) {
      if (name.includes(0)) throw new Openat2Error('unlinkat', 22);
      if (Number(unlinkat(dirFd, args.cString(name), flags)) < 0)
        throw new Openat2Error('unlinkat', koffi.errno());
    },
    mkdirat(dirFd, name, mode) {
      if (name.includes(0)) throw new Openat2Error('mkdirat', 22);
      if (Number(mkdirat(dirFd, args.cString(name), mode)) < 0)
        throw new Openat2Error('mkdirat', koffi.errno());
    },
    close(fd) {
      if (Number(close(fd)) < 0) throw new Openat2Error('close', koffi.errno());
    },
    read(fd, buffer, length) {
      // The kernel writes up to `length` bytes at the buffer's start: never past its end.
      if (!(length >= 0 && length <= buffer.length))
        throw new RangeError(`read of ${length} bytes into ${buffer.length}`);
      for (;;) {
        const count = Number(read(fd, buffer, length));
        if (count >= 0) return count;
        const errno = koffi.errno();
        if (errno !== EINTR) throw new Openat2Error('read', errno);
      }
    },
    closeRange(first, last) {
      if (!(Number.isInteger(first) && Number.isInteger(last) && first >= 0 && first <= last)) {
        throw new RangeError(`close_range(${first}, ${last})`);
      }
      // With flags 0 the kernel fails only before closing anything (EINVAL, or a seccomp filter's
      // answer: ENOSYS, EPERM, …), so any failure means "closed nothing" and the caller closes one by one.
      return Number(closeRange(SYS_CLOSE_RANGE, first, last, 0)) === 0;
    },
  };
}

/** The arguments the binding hands the kernel, built in buffers reused by every call on this thread. */
class CallArguments {
  /** One `struct open_how` per (flags, resolve) pair in use: a handful per thread, built once each. */
  readonly #hows = new Map<number, Buffer>();
  /**
   * The path NUL-terminated in a buffer reused by every call on this thread (each call copies the path in
   * and the kernel copies it out before the call returns, so no two calls share it).
   */
  #scratch = Buffer.allocUnsafe(4096);

  how(flags: number, resolve: number): Buffer {
    const key = flags * 0x100 + resolve;
    let how = this.#hows.get(key);
    if (how === undefined) {
      how = Buffer.alloc(OPEN_HOW_SIZE);
      how.writeBigUInt64LE(BigInt(flags), 0);
      how.writeBigUInt64LE(0n, 8);
      how.writeBigUInt64LE(BigInt(resolve), 16);
      this.#hows.set(key, how);
    }
    return how;
  }

  cString(path: Buffer): Buffer {
    if (path.length + 1 > this.#scratch.length) this.#scratch = Buffer.allocUnsafe(2 * (path.length + 1));
    const scratch = this.#scratch;
    path.copy(scratch, 0);
    scratch[path.length] = 0;
    return scratch;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
