import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { nativeCallError } from './errno-name.js';
import type { DirectoryListing, ListedEntry } from './file-stat.js';

/**
 * Lists a directory through the walk's own handle with getdents64(2), reached through koffi: one system
 * call per buffer of entries, on the handle the walk already holds. Node's `fs.opendirSync` needs a path,
 * so the procfs seam reopens the directory through `/proc/self/fd/<fd>` (an open and an fstat per
 * directory, a magic-link lookup, and an `fs.Dir` with its promisified methods); this reads the very
 * handle whose placement the walk proves, so what is listed is what was checked.
 *
 * Bounded like `fs.Dir`: one call returns at most one buffer (32 KiB, a few hundred to about 1,300
 * entries), and entries are handed out one at a time, so maxListedEntries stops a directory of ten million
 * names after one buffer beyond the budget, never after reading it whole.
 *
 * The handle's read position moves: a handle is listed once (the glob walk lists each directory once).
 * The listing never closes the handle; the walk that opened it does. Loaded once per thread and probed
 * against Node's own listing of a real directory before it is trusted; otherwise `loadGetdents()` is
 * undefined and the seam keeps `fs.Dir`.
 */

const BUFFER_BYTES = 32 * 1024;
/** getdents64 is not in glibc before 2.30: the syscall numbers stand in (the generic table, and x64's). */
const SYSCALL_NUMBERS: Readonly<Record<string, number>> = {
  x64: 217,
  arm64: 61,
  riscv64: 61,
  loong64: 61,
  ppc64: 202,
  s390x: 220,
};

/** d_type values (dirent.h). */
const DT_FIFO = 1;
const DT_CHR = 2;
const DT_DIR = 4;
const DT_BLK = 6;
const DT_REG = 8;
const DT_LNK = 10;
const DT_SOCK = 12;

/** One name from a listing; `type` is the d_type the file system reported (0: unknown, look it up). */
class GetdentsEntry implements ListedEntry {
  constructor(
    readonly name: Buffer,
    readonly type: number,
  ) {}
  isDirectory(): boolean {
    return this.type === DT_DIR;
  }
  isSymbolicLink(): boolean {
    return this.type === DT_LNK;
  }
  isFile(): boolean {
    return this.type === DT_REG;
  }
  isFIFO(): boolean {
    return this.type === DT_FIFO;
  }
  isSocket(): boolean {
    return this.type === DT_SOCK;
  }
  isCharacterDevice(): boolean {
    return this.type === DT_CHR;
  }
  isBlockDevice(): boolean {
    return this.type === DT_BLK;
  }
}

/** getdents64(fd, buffer, length): bytes of records filled, 0 at the end; throws with Node's `code`. */
export type Getdents = (fd: number, buffer: Buffer, length: number) => number;

/** Buffers of finished listings, reused (a walk holds one listing at a time; nesting just allocates). */
const freeBuffers: Buffer[] = [];

class GetdentsListing implements DirectoryListing {
  #buffer: Buffer | undefined;
  #position = 0;
  #end = 0;
  #done = false;

  constructor(
    private readonly fd: number,
    private readonly getdents: Getdents,
  ) {
    this.#buffer = freeBuffers.pop() ?? Buffer.allocUnsafe(BUFFER_BYTES);
  }

  readSync(): ListedEntry | null {
    const buffer = this.#buffer;
    if (buffer === undefined) throw Object.assign(new Error('listing already closed'), { code: 'EBADF' });
    for (;;) {
      if (this.#position >= this.#end) {
        if (this.#done) return null;
        const count = this.getdents(this.fd, buffer, buffer.length);
        if (count === 0) {
          this.#done = true;
          return null;
        }
        this.#position = 0;
        this.#end = count;
      }
      const at = this.#position;
      // struct linux_dirent64: d_ino u64, d_off s64, d_reclen u16, d_type u8, d_name (NUL-terminated).
      const length = buffer.readUInt16LE(at + 16);
      if (length < 20 || at + length > this.#end) {
        throw Object.assign(new Error('getdents64 returned a malformed record'), { code: 'EIO' });
      }
      this.#position = at + length;
      const type = buffer[at + 18] as number;
      // The name ends at its NUL, or at the record's end. Scanned here rather than by Buffer#indexOf: a
      // name is a few bytes, and a call into C++ per entry cost more than the scan.
      const recordEnd = at + length;
      let end = at + 19;
      while (end < recordEnd && buffer[end] !== 0) end++;
      if (isDotOrDotDot(buffer, at + 19, end)) continue;
      return new GetdentsEntry(copyName(buffer, at + 19, end), type);
    }
  }

  closeSync(): void {
    const buffer = this.#buffer;
    this.#buffer = undefined;
    if (buffer !== undefined && freeBuffers.length < 4) freeBuffers.push(buffer);
  }
}

/**
 * The name's bytes in a buffer of its own. A short name is copied byte by byte: `Buffer#copy` checks its
 * arguments and crosses into C++, twice the cost for a name of a dozen bytes (measured: ≈ 44 against 89 ns).
 */
function copyName(buffer: Buffer, start: number, end: number): Buffer {
  const length = end - start;
  const name = Buffer.allocUnsafe(length);
  if (length > SHORT_NAME_BYTES) buffer.copy(name, 0, start, end);
  else for (let i = 0; i < length; i++) name[i] = buffer[start + i] as number;
  return name;
}
const SHORT_NAME_BYTES = 32;

function isDotOrDotDot(buffer: Buffer, start: number, end: number): boolean {
  if (buffer[start] !== 0x2e) return false;
  return end === start + 1 || (end === start + 2 && buffer[start + 1] === 0x2e);
}

export type OpenGetdentsListing = (dirFd: number) => DirectoryListing;

/** A listing of `dirFd` through the given getdents64 (tests wrap the call to count what it reads). */
export function getdentsListing(dirFd: number, getdents: Getdents): DirectoryListing {
  return new GetdentsListing(dirFd, getdents);
}

let cached: { open: OpenGetdentsListing; call: Getdents } | null | undefined;

/** A listing of a directory handle by getdents64, or undefined when it cannot be used here. */
export function loadGetdents(): OpenGetdentsListing | undefined {
  if (cached === undefined) cached = tryLoad() ?? null;
  return cached?.open;
}

/** The probed getdents64 call itself, or undefined when it cannot be used here. */
export function loadGetdentsCall(): Getdents | undefined {
  if (cached === undefined) cached = tryLoad() ?? null;
  return cached?.call;
}

type KoffiFunction = (...args: unknown[]) => unknown;

function tryLoad(): { open: OpenGetdentsListing; call: Getdents } | undefined {
  if (os.platform() !== 'linux' || os.endianness() !== 'LE') return undefined;
  let getdents: Getdents;
  try {
    const koffi = createRequire(import.meta.url)('koffi') as {
      load(path: string | null): { func(signature: string): KoffiFunction };
      errno(): number;
    };
    const libc = koffi.load(null);
    let call: (fd: number, buffer: Buffer, length: number) => number;
    try {
      const named = libc.func('long getdents64(int fd, void *buffer, size_t length)');
      call = (fd, buffer, length) => Number(named(fd, buffer, length));
    } catch {
      const number = SYSCALL_NUMBERS[os.arch()];
      if (number === undefined) return undefined;
      const syscall = libc.func('long syscall(long nr, int fd, void *buffer, size_t length)');
      call = (fd, buffer, length) => Number(syscall(number, fd, buffer, length));
    }
    getdents = (fd, buffer, length) => {
      const count = call(fd, buffer, length);
      if (count < 0) throw nativeCallError('getdents64', koffi.errno());
      return count;
    };
  } catch {
    return undefined;
  }
  const open: OpenGetdentsListing = (dirFd) => new GetdentsListing(dirFd, getdents);
  return agreesWithNode(open) ? { open, call: getdents } : undefined;
}

/**
 * The listing of this module's directory (names and the types Node reports) must be exactly Node's own
 * readdir: a wrong record layout or a binding that returns garbage leaves the seam on `fs.Dir`.
 */
function agreesWithNode(open: OpenGetdentsListing): boolean {
  const directory = new URL('.', import.meta.url).pathname;
  let fd: number;
  try {
    fd = fs.openSync(directory, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  } catch {
    return false;
  }
  try {
    const ours: string[] = [];
    const listing = open(fd);
    try {
      for (let entry = listing.readSync(); entry !== null; entry = listing.readSync()) {
        ours.push(`${entry.name.toString('latin1')} ${describe(entry)}`);
      }
    } finally {
      listing.closeSync();
    }
    const node = fs
      .readdirSync(directory, { withFileTypes: true, encoding: 'latin1' })
      .map((dirent) => `${dirent.name} ${describe(dirent)}`);
    ours.sort();
    node.sort();
    return ours.length > 0 && ours.length === node.length && ours.every((line, i) => line === node[i]);
  } catch {
    return false;
  } finally {
    fs.closeSync(fd);
  }
}

function describe(entry: Omit<ListedEntry, 'name'>): string {
  if (entry.isDirectory()) return 'd';
  if (entry.isSymbolicLink()) return 'l';
  if (entry.isFile()) return 'f';
  return 'o';
}
