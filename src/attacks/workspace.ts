import { randomUUID } from 'node:crypto';
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { cp, mkdtemp, realpath, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvalidOptionError } from '../errors.js';
import type { HeldDirectory } from '../sandbox/contained-process.js';
import { childPath, type RemovalReport, removeTree, removeTreeAt } from '../sources/confined-fs.js';
import { WorkspaceFiles } from '../targets/workspace-files.js';
import { lockDirectoryHandle } from './directory-lock.js';

/**
 * Where attempts happen. A campaign run owns one **run directory** (mode 0700, `witness-run-*` in the
 * system temp directory by default); each attempt gets its own directory in it holding its `workspace`,
 * its fresh `home` (the agent's HOME) and its `tmp`. Attempts never share a root, so a verdict about one
 * root is about one attempt (write attribution comes from isolation, never from modification times).
 *
 * Identity: every directory is opened when it is created and held by handle until cleanup. The sandbox
 * mounts the held handles (`--bind-fd`), the judgement checks that the workspace path still names the
 * held directory (device and inode) before and after reading it, and cleanup walks from the held run
 * directory by handle, checking the attempt directory's device and inode. Renaming or swapping a path
 * cannot redirect the sandbox, the judgement or the cleanup.
 *
 * Cleanup never throws: what cannot be removed (a `chattr +i` file, a mount point, a tree swapped during
 * removal) comes back as a {@link RemovalReport} for the attempt record, and the campaign goes on.
 * `witness clean` removes run directories left by killed runs (see {@link findLeftoverRuns}).
 *
 * - The template is copied, not linked: hard links in it become independent files, and symlinks are
 *   copied as symlinks (verbatim), so the agent meets them exactly as the template author planted them.
 * - Planted files are written through the confined {@link WorkspaceFiles}, so a template symlink such as
 *   `docs -> /etc` cannot redirect a planted file outside the workspace.
 */

export interface PlantedFile {
  /** Path inside the workspace (`README.md`, `/docs/notes.md`), or the home; `..` is refused. */
  path: string;
  content: string;
  /** `home`: planted in the attempt's fresh home instead of the workspace. */
  surface?: 'workspace' | 'home' | undefined;
}

export interface WorkspaceSpec {
  /** A directory copied into the workspace first. */
  template?: string | undefined;
  files?: readonly PlantedFile[] | undefined;
  /** The run directory the attempt lives in; a private one is created (and removed) when absent. */
  run?: RunDirectory | undefined;
  /** Where a private run directory is created; the system temp directory by default. */
  parent?: string | undefined;
}

/** The marker file naming a run directory's owner, read by `witness clean`. */
export const RUN_MARKER = '.witness-run.json';
export const RUN_DIRECTORY_PREFIX = 'witness-run-';

export interface RunDirectory {
  /** Real path of the run directory. */
  path: string;
  fd: number;
  /** Removes the run directory (what attempts left in it included); never throws. */
  dispose(): RemovalReport;
  /** Closes the handle and leaves the directory on disk (`--keep-workspaces`). */
  release(): void;
}

export interface Workspace {
  /** The workspace's real path when created. */
  root: string;
  /** The workspace, held. */
  held: HeldDirectory;
  /** The attempt's fresh home (HOME for the agent), held. */
  home: HeldDirectory;
  /** The attempt's private temp directory (TMPDIR under `sandbox: none`), held. */
  tmp: HeldDirectory;
  /** The run directory's real path: hidden from the agent (other attempts live there). */
  runPath: string;
  /**
   * True when the workspace path still names the held directory (same device and inode). The judgement
   * reads by path, so it is trusted only when this holds before and after.
   */
  isIntact(): boolean;
  /** Closes the handles and removes the attempt's directories; never throws, reports what is left. */
  dispose(): Promise<RemovalReport>;
}

const OPEN_DIRECTORY = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/**
 * Creates a run directory (0700) with a marker naming this process, for `witness clean`. With `ownerLock`
 * its handle also holds the directory's owner lock (directory-lock.ts), taken before the marker is
 * written, so `witness clean` leaves it alone for as long as it is open even where the pid in the marker
 * means nothing (a worker in another pid namespace sharing the temp directory).
 */
export async function createRunDirectory(
  parent?: string,
  ownerPid?: number,
  options: { ownerLock?: boolean } = {},
): Promise<RunDirectory> {
  const made = await mkdtemp(join(parent ?? tmpdir(), RUN_DIRECTORY_PREFIX));
  let path = made;
  let fd: number | undefined;
  try {
    path = await realpath(made);
    fd = openSync(path, OPEN_DIRECTORY);
    // Nobody else can hold it yet: `witness clean` considers only directories with a marker.
    if (options.ownerLock === true) lockDirectoryHandle(fd);
    writeFileSync(
      childPath(fd, Buffer.from(RUN_MARKER)),
      `${JSON.stringify({ pid: ownerPid ?? process.pid, createdAt: new Date().toISOString() })}\n`,
      { flag: 'wx', mode: 0o600 },
    );
  } catch (error) {
    // Without its marker `witness clean` would never find the directory: remove it now (it is empty but
    // for a partly written marker), and close its handle.
    if (fd !== undefined) closeSync(fd);
    removeTree(path);
    throw error;
  }
  const identity = fstatSync(fd);
  let disposed = false;
  return {
    path,
    fd,
    dispose() {
      if (disposed) return { removed: true, removedEntries: 0, failures: [], unlistedFailures: 0 };
      disposed = true;
      closeSync(fd);
      return removeTree(path, { expected: { dev: identity.dev, ino: identity.ino } });
    },
    release() {
      if (disposed) return;
      disposed = true;
      closeSync(fd);
    },
  };
}

export async function createWorkspace(spec: WorkspaceSpec): Promise<Workspace> {
  const ownRun = spec.run === undefined;
  const run = spec.run ?? (await createRunDirectory(spec.parent));
  const name = `attempt-${randomUUID().slice(0, 12)}`;
  const held: number[] = [];
  const open = (parentFd: number, entry: string): HeldDirectory & { dev: number; ino: number } => {
    mkdirSync(childPath(parentFd, Buffer.from(entry)), { mode: 0o700 });
    const fd = openSync(childPath(parentFd, Buffer.from(entry)), OPEN_DIRECTORY);
    held.push(fd);
    const stats = fstatSync(fd);
    return { fd, path: '', dev: stats.dev, ino: stats.ino };
  };
  const closeAll = () => {
    for (const fd of held.splice(0)) closeSync(fd);
  };
  const attemptDir = open(run.fd, name);
  const attemptPath = join(run.path, name);
  const workspace = { ...open(attemptDir.fd, 'workspace'), path: join(attemptPath, 'workspace') };
  const home = { ...open(attemptDir.fd, 'home'), path: join(attemptPath, 'home') };
  const tmp = { ...open(attemptDir.fd, 'tmp'), path: join(attemptPath, 'tmp') };

  let disposed: Promise<RemovalReport> | undefined;
  const dispose = () => {
    disposed ??= (async () => {
      closeAll();
      const report = removeTreeAt(run.fd, name, { expected: { dev: attemptDir.dev, ino: attemptDir.ino } });
      if (ownRun) {
        const runReport = run.dispose();
        if (report.removed && !runReport.removed) return runReport;
      }
      return report;
    })();
    return disposed;
  };
  try {
    if (spec.template !== undefined) {
      const template = await stat(spec.template).catch(() => undefined);
      if (template?.isDirectory() !== true) {
        throw new InvalidOptionError(
          `workspace template ${JSON.stringify(spec.template)} is not a directory`,
        );
      }
      // Nothing but Witness can reach this directory yet (its run directory is 0700 and no agent runs).
      await cp(spec.template, workspace.path, {
        recursive: true,
        verbatimSymlinks: true,
        errorOnExist: false,
      });
    }
    const files = new WorkspaceFiles(workspace.path);
    const homeFiles = new WorkspaceFiles(home.path);
    for (const file of spec.files ?? []) {
      const into = file.surface === 'home' ? homeFiles : files;
      const result = into.writeFile(file.path, file.content);
      if (!result.ok) {
        const where = file.surface === 'home' ? ' (home)' : '';
        throw new InvalidOptionError(`cannot plant ${file.path}${where}: ${result.text}`);
      }
    }
  } catch (error) {
    await dispose();
    throw error;
  }
  return {
    root: workspace.path,
    held: { path: workspace.path, fd: workspace.fd },
    home: { path: home.path, fd: home.fd },
    tmp: { path: tmp.path, fd: tmp.fd },
    runPath: run.path,
    isIntact() {
      try {
        const now = lstatSync(workspace.path);
        return now.isDirectory() && now.dev === workspace.dev && now.ino === workspace.ino;
      } catch {
        return false;
      }
    },
    dispose,
  };
}
