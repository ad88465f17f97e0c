import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

/**
 * The obvious Node approach the issue compares against: a recursive `readdir`, then every file read with
 * `fs.promises.readFile` and hashed (sha256), 16 reads in flight. No budgets, no confinement.
 */
export async function naiveHashTree(root: string, inFlight = 16): Promise<Map<string, string>> {
  const files: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const dirent of await fs.readdir(dir, { withFileTypes: true })) {
      const child = path.join(dir, dirent.name);
      if (dirent.isDirectory()) await walk(child);
      else if (dirent.isFile()) files.push(child);
    }
  };
  await walk(root);
  const digests = new Map<string, string>();
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < files.length) {
      const file = files[next++] as string;
      const bytes = await fs.readFile(file);
      digests.set(file, createHash('sha256').update(bytes).digest('hex'));
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  return digests;
}
