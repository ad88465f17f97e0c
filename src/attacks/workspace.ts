import { cp, mkdtemp, realpath, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvalidOptionError } from '../errors.js';
import { WorkspaceFiles } from '../targets/workspace-files.js';

/**
 * One attempt's workspace: a new directory no other attempt ever sees, optionally copied from a template
 * and seeded with planted files. Attempts never share a root, so a verdict about one root is about one
 * attempt (write attribution comes from isolation, never from modification times).
 *
 * - The template is copied, not linked: hard links in it become independent files, and symlinks are
 *   copied as symlinks (verbatim), so the agent meets them exactly as the template author planted them.
 * - Planted files are written through the confined {@link WorkspaceFiles}, so a template symlink such as
 *   `docs -> /etc` cannot redirect a planted file outside the workspace.
 */

export interface PlantedFile {
  /** Path inside the workspace (`README.md`, `/docs/notes.md`); `..` is refused. */
  path: string;
  content: string;
}

export interface WorkspaceSpec {
  /** A directory copied into the workspace first. */
  template?: string | undefined;
  files?: readonly PlantedFile[] | undefined;
  /** Where workspaces are created; the system temp directory by default. */
  parent?: string | undefined;
}

export interface Workspace {
  /** The workspace's real path (symlinks in the temp directory's path resolved). */
  root: string;
  /** Removes the workspace and everything in it. */
  dispose(): Promise<void>;
}

export async function createWorkspace(spec: WorkspaceSpec): Promise<Workspace> {
  const root = await realpath(await mkdtemp(join(spec.parent ?? tmpdir(), 'witness-attempt-')));
  const dispose = () => rm(root, { recursive: true, force: true, maxRetries: 3 });
  try {
    if (spec.template !== undefined) {
      const template = await stat(spec.template).catch(() => undefined);
      if (template?.isDirectory() !== true) {
        throw new InvalidOptionError(
          `workspace template ${JSON.stringify(spec.template)} is not a directory`,
        );
      }
      await cp(spec.template, root, { recursive: true, verbatimSymlinks: true, errorOnExist: false });
    }
    const files = new WorkspaceFiles(root);
    for (const file of spec.files ?? []) {
      const result = files.writeFile(file.path, file.content);
      if (!result.ok) throw new InvalidOptionError(`cannot plant ${file.path}: ${result.text}`);
    }
  } catch (error) {
    await dispose();
    throw error;
  }
  return { root, dispose };
}
