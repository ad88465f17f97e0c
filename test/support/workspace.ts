import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after } from 'node:test';

/**
 * A fresh temporary workspace with the given files (path → content), removed when the test file ends.
 * Paths are root-relative with "/" separators.
 */
export function makeWorkspace(files: Record<string, string | Buffer> = {}): string {
  const root = mkdtempSync(path.join(tmpdir(), 'witness-ws-'));
  after(() => rmSync(root, { recursive: true, force: true }));
  for (const [relative, content] of Object.entries(files)) {
    const target = path.join(root, relative);
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, content);
  }
  return root;
}
