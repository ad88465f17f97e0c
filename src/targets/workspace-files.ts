import { ftruncateSync, readSync, type Stats, writeSync } from 'node:fs';
import { platform } from 'node:os';
import { InvalidOptionError } from '../errors.js';
import {
  closeHandle,
  errorCode,
  handlePath,
  listDirectoryAt,
  openDirectoryBeneath,
  openDirectoryPath,
  openForWriteAt,
  openPathAt,
  placeHandle,
  procfsSurfaceFs,
  reopenForRead,
  statHandle,
} from '../sources/confined-fs.js';

/**
 * File operations an agent performs in its workspace, confined to that workspace on Linux. Every path
 * an agent gives is untrusted (it may come from an injected instruction), so each operation answers with a
 * {@link FileResult} — a refusal is data the agent sees, never an exception.
 *
 * How confinement works, and the attack each check stops:
 * - Paths are split into segments; `..`, NUL and backslashes are refused before any I/O. Stops plain
 *   traversal (`../../home/user/.bashrc`). A leading `/` means the workspace root, never the host root.
 * - The root is opened once as a directory handle; every child is reached *relative to its parent's
 *   handle* through `/proc/self/fd/<dirfd>/<name>` (openat semantics from plain Node), one segment at a
 *   time. Stops a parent directory swapped for a symlink between a check and the use (TOCTOU): there is no
 *   path string to re-resolve.
 * - Every directory is opened `O_DIRECTORY|O_NOFOLLOW`; every file is first opened `O_PATH|O_NOFOLLOW`
 *   (no driver or FIFO side effects) and refused when it is a symlink. Stops a planted link
 *   (`notes -> /etc`, `out.txt -> ~/.ssh/authorized_keys`) from carrying a read or write outside.
 * - fstat of the handle: not a regular file → refused; a FIFO never stalls the agent (`O_NONBLOCK`) and a
 *   device (`/dev/zero`) is never read. More than one hard link → refused, so a hard link planted in a
 *   template to an outside file cannot be read or overwritten through the workspace.
 * - `readlink /proc/self/fd/<fd>` of the open handle must be strictly inside the root's real path. Defence
 *   in depth against anything the walk missed (e.g. a bind mount); where it cannot be established the
 *   operation is refused, never trusted.
 * - Writes open without truncating, verify the handle, then truncate: a file swapped in between the check
 *   and the open is never destroyed before it is verified.
 * - Reads, writes and listings are bounded (`maxReadBytes`, `maxWriteBytes`, `maxListedEntries`).
 *
 * Off Linux (no `/proc/self/fd`), every operation is refused: Witness does not fall back to path checks.
 */

export interface WorkspaceFilesOptions {
  /** Bytes returned by one read (the rest is reported as truncated). Default 262,144. */
  maxReadBytes?: number;
  /** Bytes accepted by one write. Default 1,000,000. */
  maxWriteBytes?: number;
  /** Entries returned by one listing. Default 1,000. */
  maxListedEntries?: number;
}

export type FileResult = { ok: true; text: string } | { ok: false; text: string };

const DEFAULTS = { maxReadBytes: 262_144, maxWriteBytes: 1_000_000, maxListedEntries: 1_000 } as const;

export class WorkspaceFiles {
  readonly root: string;
  readonly #limits: Required<WorkspaceFilesOptions>;

  constructor(root: string, options: WorkspaceFilesOptions = {}) {
    if (typeof root !== 'string' || !root.startsWith('/')) {
      throw new InvalidOptionError(`workspace root must be an absolute path, got ${JSON.stringify(root)}`);
    }
    this.root = root;
    const limits = { ...DEFAULTS, ...options };
    for (const [name, value] of Object.entries(limits)) {
      if (!Number.isSafeInteger(value) || value <= 0) {
        throw new InvalidOptionError(`${name} must be a positive integer, got ${String(value)}`);
      }
    }
    this.#limits = limits;
  }

  readFile(path: string): FileResult {
    return this.#withParent(path, false, (dirFd, name, rootReal) => {
      const pathFd = openPathAt(dirFd, name);
      try {
        const refusal = checkFileHandle(statHandle(pathFd), path);
        if (refusal !== undefined) return refusal;
        const fd = reopenForRead(pathFd);
        try {
          const stat = statHandle(fd);
          const again = checkFileHandle(stat, path) ?? checkInside(fd, rootReal, path);
          if (again !== undefined) return again;
          const cap = this.#limits.maxReadBytes;
          const buffer = Buffer.alloc(Math.min(cap, Math.max(stat.size, 0)) + 1);
          let read = 0;
          while (read < buffer.length) {
            const n = readSync(fd, buffer, read, buffer.length - read, null);
            if (n === 0) break;
            read += n;
          }
          const truncated = read > cap;
          const bytes = buffer.subarray(0, Math.min(read, cap));
          const text = decodeUtf8(bytes);
          if (text === undefined) return { ok: true, text: `(binary file, ${stat.size} bytes, not shown)` };
          return {
            ok: true,
            text: truncated ? `${text}\n(truncated: file is larger than ${cap} bytes)` : text,
          };
        } finally {
          closeHandle(fd);
        }
      } finally {
        closeHandle(pathFd);
      }
    });
  }

  writeFile(path: string, content: string): FileResult {
    const bytes = Buffer.from(content, 'utf8');
    if (bytes.length > this.#limits.maxWriteBytes) {
      return refuse(path, `content is ${bytes.length} bytes; the limit is ${this.#limits.maxWriteBytes}`);
    }
    return this.#withParent(path, true, (dirFd, name, rootReal) => {
      const existing = openExistingPath(dirFd, name);
      if (existing !== undefined) {
        try {
          const refusal = checkFileHandle(statHandle(existing), path);
          if (refusal !== undefined) return refusal;
        } finally {
          closeHandle(existing);
        }
      }
      const fd = openForWriteAt(dirFd, name, 0o644);
      try {
        const refusal = checkFileHandle(statHandle(fd), path) ?? checkInside(fd, rootReal, path);
        if (refusal !== undefined) return refusal;
        ftruncateSync(fd, 0);
        let written = 0;
        while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
        return { ok: true, text: `wrote ${bytes.length} bytes to ${display(path)}` };
      } finally {
        closeHandle(fd);
      }
    });
  }

  listDir(path: string): FileResult {
    const segments = splitPath(path);
    if (typeof segments === 'string') return refuse(path, segments);
    return this.#withRoot(path, (rootFd, rootReal) => {
      const dirFd = segments.length === 0 ? rootFd : this.#walk(rootFd, segments, false);
      if (typeof dirFd === 'object') return dirFd;
      try {
        const inside = segments.length === 0 ? undefined : checkInside(dirFd, rootReal, path);
        if (inside !== undefined) return inside;
        // Names beyond what is shown are counted up to this many: a directory of millions costs no more.
        const cap = this.#limits.maxListedEntries;
        const listed = listDirectoryAt(dirFd, Math.max(cap * 10, 10_000));
        const names: string[] = [];
        let skipped = 0;
        for (const entry of listed.names) {
          const name = decodeUtf8(entry.name);
          if (name === undefined) {
            skipped++;
            continue;
          }
          names.push(entry.kind === 'directory' ? `${name}/` : entry.kind === 'symlink' ? `${name}@` : name);
        }
        names.sort();
        const lines = names.slice(0, cap);
        if (names.length > cap) {
          lines.push(`(${names.length - cap}${listed.complete ? '' : ' or more'} more entries not shown)`);
        } else if (!listed.complete) lines.push('(more entries not shown)');
        if (skipped > 0) lines.push(`(${skipped} entries with names that are not UTF-8 not shown)`);
        return { ok: true, text: lines.length === 0 ? '(empty directory)' : lines.join('\n') };
      } finally {
        if (dirFd !== rootFd) closeHandle(dirFd);
      }
    });
  }

  #withRoot(path: string, body: (rootFd: number, rootReal: Buffer) => FileResult): FileResult {
    if (platform() !== 'linux') {
      return refuse(path, 'confinement cannot be verified on this platform (no /proc/self/fd)');
    }
    let rootFd: number;
    try {
      rootFd = openDirectoryPath(this.root);
    } catch (error) {
      return refuse(path, `the workspace root cannot be opened (${errorCode(error)})`);
    }
    try {
      const rootReal = handlePath(rootFd);
      if (rootReal[0] !== 0x2f) return refuse(path, 'confinement cannot be verified');
      return body(rootFd, rootReal);
    } catch (error) {
      return refuse(path, describeError(error));
    } finally {
      closeHandle(rootFd);
    }
  }

  #withParent(
    path: string,
    create: boolean,
    body: (dirFd: number, name: string, rootReal: Buffer) => FileResult,
  ): FileResult {
    const segments = splitPath(path);
    if (typeof segments === 'string') return refuse(path, segments);
    const name = segments.at(-1);
    if (name === undefined) return refuse(path, 'names the workspace root, not a file');
    return this.#withRoot(path, (rootFd, rootReal) => {
      const dirFd = segments.length === 1 ? rootFd : this.#walk(rootFd, segments.slice(0, -1), create);
      if (typeof dirFd === 'object') return dirFd;
      try {
        return body(dirFd, name, rootReal);
      } catch (error) {
        return refuse(path, describeError(error));
      } finally {
        if (dirFd !== rootFd) closeHandle(dirFd);
      }
    });
  }

  /** Opens each directory relative to its parent's handle, never following a link (creating with `create`). */
  #walk(rootFd: number, segments: readonly string[], create: boolean): number | FileResult {
    try {
      return openDirectoryBeneath(rootFd, segments, create ? 0o755 : undefined);
    } catch (error) {
      const failed = (error as { segment?: number }).segment ?? segments.length - 1;
      return refuse(segments.slice(0, failed + 1).join('/'), describeError(error));
    }
  }
}

/** Splits an agent-supplied path into segments, or says why it is refused. `.` segments are dropped. */
export function splitPath(path: unknown): string[] | string {
  if (typeof path !== 'string') return 'the path must be a string';
  if (path.includes('\0')) return 'the path contains a NUL byte';
  if (path.includes('\\')) return 'the path contains a backslash; use "/"';
  const segments = path.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..')) return 'the path has a ".." segment; paths stay inside the workspace';
  return segments;
}

function checkFileHandle(stat: Stats, path: string): FileResult | undefined {
  if (stat.isSymbolicLink()) return refuse(path, 'is a symbolic link; links are not followed');
  if (stat.isDirectory()) return refuse(path, 'is a directory');
  if (!stat.isFile()) return refuse(path, 'is not a regular file (FIFO, socket or device)');
  if (stat.nlink > 1)
    return refuse(path, 'has more than one hard link; it may be shared with a file outside');
  return undefined;
}

/**
 * The handle's kernel-reported path must lie strictly below the root's: the same check, on bytes, that
 * the surface source makes (one confinement module; a string-prefix copy once accepted a sibling such as
 * `/ws2` for root `/ws` in edge cases and compared decoded names).
 */
function checkInside(fd: number, rootReal: Buffer, path: string): FileResult | undefined {
  const placement = placeHandle(procfsSurfaceFs, fd, rootReal);
  if (placement.kind === 'unverified') return refuse(path, 'confinement cannot be verified');
  if (placement.kind === 'outside') return refuse(path, 'resolves outside the workspace');
  return undefined;
}

function openExistingPath(dirFd: number, name: string): number | undefined {
  try {
    return openPathAt(dirFd, name);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw error;
  }
}

function decodeUtf8(bytes: Buffer): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

function refuse(path: unknown, why: string): FileResult {
  return { ok: false, text: `refused ${display(path)}: ${why}` };
}

function display(path: unknown): string {
  return JSON.stringify(typeof path === 'string' ? path.slice(0, 200) : String(path));
}

function describeError(error: unknown): string {
  switch (errorCode(error)) {
    case 'ENOENT':
      return 'no such file or directory';
    case 'ELOOP':
      return 'is a symbolic link; links are not followed';
    case 'ENOTDIR':
      return 'a parent is not a directory (or is a symbolic link)';
    case 'EISDIR':
      return 'is a directory';
    case 'ENXIO':
      return 'is a FIFO or device with no peer';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    default:
      return `failed (${errorCode(error)})`;
  }
}
