import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

/**
 * 1M entries removed in bounded memory (issue 10: Node 20's recursive `fs.rm` started one removal per
 * entry at once, 1.9 GB RSS for 1M files). The removal runs in a child process so its peak RSS is its
 * own; the bound is generous (the walk itself holds a few directory handles and a 64-entry batch).
 */

const ENTRIES = 1_000_000;
const RSS_BOUND_BYTES = 256 * 1024 * 1024;

describe('removing a 1M-entry workspace', () => {
  it('stays under a memory bound', () => {
    const base = mkdtempSync(join('/var/tmp', 'witness-million-'));
    try {
      const ws = join(base, 'ws');
      // 1,000 directories of 999 files each, plus the directories: 1M entries.
      for (let d = 0; d < 1_000; d++) {
        const dir = join(ws, `d${d}`);
        mkdirSync(dir, { recursive: true });
        for (let f = 0; f < ENTRIES / 1_000 - 1; f++) closeSync(openSync(join(dir, `f${f}`), 'w'));
      }
      const module = fileURLToPath(
        new URL('../../../src/sources/confined-fs/remove-tree.js', import.meta.url),
      );
      const script = `
        const { removeTree } = await import(${JSON.stringify(module)});
        const report = removeTree(${JSON.stringify(ws)});
        process.stdout.write(JSON.stringify({ report, maxRssBytes: process.resourceUsage().maxRSS * 1024 }));
      `;
      const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
        encoding: 'utf8',
        maxBuffer: 1024 * 1024,
      });
      const { report, maxRssBytes } = JSON.parse(output) as {
        report: { removed: boolean; removedEntries: number };
        maxRssBytes: number;
      };
      assert.equal(report.removed, true);
      assert.equal(report.removedEntries, ENTRIES + 1);
      assert.equal(existsSync(ws), false);
      assert.ok(maxRssBytes < RSS_BOUND_BYTES, `peak RSS ${Math.round(maxRssBytes / 1e6)} MB`);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});
