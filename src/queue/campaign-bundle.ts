import { createHash } from 'node:crypto';
import { lstat, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { sql } from 'kysely';
import * as z from 'zod';
import { BundleMismatchError, InvalidCampaignError } from '../errors.js';
import { QUEUE_SCHEMA, type QueueDb } from './queue-store.js';
import { createWorkerDirectory, type WorkerDirectory } from './worker-directories.js';

/**
 * A campaign's files travel with its run: every regular file under the campaign file's directory (the
 * template, agent scripts, the campaign file itself) is stored content-addressed (sha256) in the database
 * and listed in the run's manifest, so a worker needs only the database URL.
 *
 * Bounds: at most {@link MAX_BUNDLE_BYTES} in at most {@link MAX_BUNDLE_FILES} files — a campaign in a
 * directory that also holds a repository checkout or `node_modules` is refused with the fix.
 *
 * On the worker every file is re-hashed after it is read back and before it is written: a blob changed in
 * the database (a tampered agent script) does not match its manifest hash and the job is refused with a
 * {@link BundleMismatchError}; nothing of that run is executed.
 */

export const MAX_BUNDLE_BYTES = 64 * 1024 * 1024;
export const MAX_BUNDLE_FILES = 10_000;

export const BundleFileSchema = z.strictObject({
  path: z.string().min(1),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  size: z.number().int().nonnegative(),
  executable: z.boolean(),
});
export const BundleManifestSchema = z.strictObject({ files: z.array(BundleFileSchema) });
export type BundleManifest = z.infer<typeof BundleManifestSchema>;

interface CollectedFile {
  path: string;
  content: Buffer;
  sha256: string;
  executable: boolean;
}

export function sha256Of(content: Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}

/** Reads the campaign directory into memory (bounded); symlinks and special files are refused. */
export async function collectCampaignFiles(campaignDir: string): Promise<CollectedFile[]> {
  const root = resolve(campaignDir);
  const files: CollectedFile[] = [];
  let total = 0;
  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const entry of entries) {
      const full = join(dir, entry.name);
      const path = relative(root, full).split(sep).join('/');
      if (entry.isDirectory()) {
        await walk(full);
        continue;
      }
      if (!entry.isFile()) {
        throw new InvalidCampaignError(
          `${full}: only regular files and directories travel with a queued run; move it out of the campaign directory or replace the link with the file`,
        );
      }
      const stat = await lstat(full);
      total += stat.size;
      if (files.length + 1 > MAX_BUNDLE_FILES || total > MAX_BUNDLE_BYTES) {
        throw new InvalidCampaignError(
          `the campaign directory ${root} holds more than ${MAX_BUNDLE_FILES} files or ${MAX_BUNDLE_BYTES / 1024 / 1024} MiB, the most a queued run carries; put the campaign file, its template and agent scripts in a directory of their own`,
        );
      }
      const content = await readFile(full);
      files.push({ path, content, sha256: sha256Of(content), executable: (stat.mode & 0o111) !== 0 });
    }
  };
  await walk(root);
  return files;
}

/** Stores the files' contents (once per hash) and returns the manifest naming them. */
export async function storeCampaignFiles(
  db: QueueDb,
  files: readonly CollectedFile[],
): Promise<BundleManifest> {
  for (const file of files) {
    await sql`insert into ${sql.raw(QUEUE_SCHEMA)}.blobs (sha256, size, content)
              values (${file.sha256}, ${file.content.length}, ${file.content})
              on conflict (sha256) do nothing`.execute(db);
  }
  return {
    files: files.map((file) => ({
      path: file.path,
      sha256: file.sha256,
      size: file.content.length,
      executable: file.executable,
    })),
  };
}

/**
 * Writes the manifest's files into a new private (0700) worker directory, each checked against its hash
 * first. Paths are checked to stay inside the directory (a forged manifest naming `../x` is refused). The
 * worker holds the directory's lock until it removes it, so a sweep never takes it for a dead worker's
 * (worker-directories.ts).
 */
export async function materializeCampaignFiles(
  db: QueueDb,
  manifest: BundleManifest,
  parent: string = tmpdir(),
  ownerPid: number = process.pid,
): Promise<WorkerDirectory> {
  const directory = createWorkerDirectory(parent, ownerPid);
  const dir = directory.path;
  try {
    for (const file of manifest.files) {
      const target = resolve(dir, file.path);
      if (!target.startsWith(`${dir}${sep}`) || file.path.split('/').includes('..')) {
        throw new BundleMismatchError(
          `the run's manifest names ${JSON.stringify(file.path)}, outside the campaign directory`,
        );
      }
      const { rows } = await sql<{ content: Buffer }>`
        select content from ${sql.raw(QUEUE_SCHEMA)}.blobs where sha256 = ${file.sha256}`.execute(db);
      const content = rows[0]?.content;
      if (content === undefined) {
        throw new BundleMismatchError(
          `campaign file ${file.path} (sha256 ${file.sha256}) is not stored in the queue`,
        );
      }
      const actual = sha256Of(content);
      if (actual !== file.sha256) {
        throw new BundleMismatchError(
          `campaign file ${file.path} does not match its hash: the run's manifest says sha256 ${file.sha256}, the stored content hashes to ${actual}; the job is refused (resubmit the run from the original campaign directory)`,
        );
      }
      // Searchable and readable as a checkout is: as root, the agent runs as an unprivileged uid of its
      // own (SPEC §13), which must reach the campaign's scripts (the worker directory above is 0711).
      await mkdir(dirname(target), { recursive: true, mode: 0o711 });
      await writeFile(target, content, { mode: file.executable ? 0o755 : 0o644 });
    }
  } catch (error) {
    // A refused bundle leaves nothing behind.
    await directory.remove();
    throw error;
  }
  return directory;
}
