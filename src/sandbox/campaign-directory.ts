import { realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { InvalidOptionError } from '../errors.js';

/**
 * The campaign directory inside the sandbox (SPEC §11). A campaign's relative paths — its command, an MCP
 * server script, `{campaignDir}` in arguments — resolve against the directory of the campaign file, so the
 * agent must find that directory at the same path: it is shown **read-only**, wherever it is. Without
 * this, a campaign kept under `/tmp` (which the sandbox replaces with a private tmpfs) or under the
 * operator's home (hidden) failed with ENOENT for its own agent script.
 *
 * What showing it must not undo, and the attack each rule stops:
 * - The directory is read-only: an agent cannot rewrite its own script, the campaign, or plant a file
 *   that a later attempt's agent would run (one attempt reaching into the next).
 * - The memory database and its `-wal`/`-shm`/`-journal` are covered by `/dev/null` at the path they have
 *   in the directory (also when the directory is named through a symbolic link): a compromised agent
 *   reads no stored evidence or other attempts' results, and cannot rewrite them.
 * - The campaign file itself is covered too: it names every attack's payload and the condition each
 *   attempt is judged by, which the agent under test has no business reading.
 * - A run directory (every attempt's workspace) or the directory run directories are made in, when it
 *   lies inside the campaign directory (`TMPDIR` pointing into it), stays under an empty tmpfs; so does
 *   the operator's home when the campaign directory holds it (`/home`).
 * - The directory is not shown at all when showing it would reveal what these rules protect as a whole:
 *   when it is `/`, the operator's home itself, `/tmp` itself (the agent's private, writable `/tmp`), the
 *   directory run directories are made in, or lies in a run directory. {@link CampaignDirectoryMounts}
 *   says why, so an agent's ENOENT can be explained to the operator.
 */

export interface CampaignDirectory {
  /** The directory as the campaign's paths name it (absolute; may pass through a symbolic link). */
  path: string;
  /** The same directory with every symbolic link resolved: what the rules compare. */
  realPath: string;
  /** The campaign file (real path), hidden from the agent. */
  campaignFile?: string | undefined;
}

/** Resolves the directory of `campaignFile`; an unreadable directory is an {@link InvalidOptionError}. */
export function campaignDirectoryOf(campaignFile: string): CampaignDirectory {
  const path = dirname(resolve(campaignFile));
  let realPath: string;
  try {
    realPath = realpathSync(path);
  } catch (error) {
    throw new InvalidOptionError(
      `the campaign directory ${path} cannot be resolved (${(error as NodeJS.ErrnoException).code}); the sandbox shows it to the agent read-only`,
    );
  }
  return { path, realPath, campaignFile: join(realPath, basename(campaignFile)) };
}

export interface CampaignDirectoryInput {
  directory: CampaignDirectory;
  /** Real paths of directories hidden from the agent besides the run directory (the operator's home). */
  hiddenDirectories: readonly string[];
  /** Real path of the run directory holding every attempt of the run. */
  runPath: string;
  /** Files hidden from the agent (the memory database and its side files), real or as named. */
  hiddenFiles: readonly string[];
  /** True under bubblewrap, whose `/tmp` is the agent's own tmpfs. */
  privateTmp: boolean;
}

export type CampaignDirectoryMounts =
  | {
      shown: true;
      /** Bound read-only at this path. */
      path: string;
      /** Directories inside it covered again by an empty tmpfs. */
      hiddenDirectories: string[];
      /** Files inside it covered by `/dev/null`. */
      hiddenFiles: string[];
    }
  | { shown: false; path: string; reason: string };

/** Decides how the campaign directory appears in the sandbox; pure (paths in, mounts out). */
export function campaignDirectoryMounts(input: CampaignDirectoryInput): CampaignDirectoryMounts {
  const { path, realPath } = input.directory;
  const runParent = dirname(input.runPath);
  const withheld = (reason: string): CampaignDirectoryMounts => ({ shown: false, path, reason });
  if (realPath === '/') return withheld('it is the root directory');
  if (input.privateTmp && (realPath === '/tmp' || path === '/tmp')) {
    return withheld('it is /tmp itself, which the sandbox replaces with the agent’s own writable /tmp');
  }
  if (input.hiddenDirectories.includes(realPath)) {
    return withheld('it is the operator’s home directory, which is hidden from the agent');
  }
  if (within(realPath, input.runPath)) return withheld('it lies in the run directory of the attempts');
  if (realPath === runParent) {
    return withheld('it is the directory the run directories of every attempt are made in (TMPDIR)');
  }
  // Paths inside the real directory, as they appear under the shown path.
  const alias = (inner: string) => join(path, relative(realPath, inner));
  const hiddenDirectories = [...input.hiddenDirectories, runParent, input.runPath]
    .filter((directory) => inside(directory, realPath))
    .map(alias);
  const hiddenFiles = [
    ...input.hiddenFiles,
    ...(input.directory.campaignFile ? [input.directory.campaignFile] : []),
  ]
    .filter((file) => inside(file, realPath) || inside(file, path))
    .map((file) => (inside(file, realPath) ? alias(file) : file));
  return {
    shown: true,
    path,
    hiddenDirectories: [...new Set(hiddenDirectories)],
    hiddenFiles: [...new Set(hiddenFiles)],
  };
}

/** True when `path` lies strictly inside `directory`. */
function inside(path: string, directory: string): boolean {
  const rel = relative(directory, path);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

function within(path: string, directory: string): boolean {
  return path === directory || inside(path, directory);
}
