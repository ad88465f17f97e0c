import { readdirSync } from 'node:fs';
import path from 'node:path';

/** Every TypeScript file under `dir` (a path relative to the repository root, where tests run), sorted. */
export function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(file));
    else if (file.endsWith('.ts')) out.push(file);
  }
  return out.sort();
}
