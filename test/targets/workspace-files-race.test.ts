import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { WorkspaceFiles } from '../../src/targets/workspace-files.js';

// Another process swaps `ws/d` between a real directory and a symlink to an outside directory as fast as
// it can, while the tools write and read through `d`. Checking a path and then using it would sometimes
// land outside; walking by handle with O_NOFOLLOW never does.
const SWAPPER = `
const fs = require('node:fs');
const [ws, outside] = process.argv.slice(1);
const hold = () => { const until = process.hrtime.bigint() + 200000n; while (process.hrtime.bigint() < until); };
// When a write created a real 'd' in a gap, remove it (rm never follows a link) and restore both states.
const recover = () => {
  fs.rmSync(ws + '/d', { recursive: true, force: true });
  try { fs.mkdirSync(ws + '/d_dir'); } catch {}
  try { fs.symlinkSync(outside, ws + '/d_link'); } catch {}
};
const end = Date.now() + 1500;
while (Date.now() < end) {
  try { fs.renameSync(ws + '/d_dir', ws + '/d'); hold(); fs.renameSync(ws + '/d', ws + '/d_dir'); } catch { recover(); }
  try { fs.renameSync(ws + '/d_link', ws + '/d'); hold(); fs.renameSync(ws + '/d', ws + '/d_link'); } catch { recover(); }
}
`;

describe('WorkspaceFiles under a swap race', () => {
  it('never writes into or reads from the outside directory a swapped-in symlink points at', async () => {
    const base = mkdtempSync(join(tmpdir(), 'witness-race-'));
    try {
      const ws = join(base, 'ws');
      const outside = join(base, 'outside');
      mkdirSync(join(ws, 'd_dir'), { recursive: true });
      mkdirSync(outside);
      writeFileSync(join(outside, 'secret.txt'), 'outside secret');
      symlinkSync(outside, join(ws, 'd_link'));
      const swapper = spawn(process.execPath, ['-e', SWAPPER, ws, outside], { stdio: 'ignore' });
      const exited = new Promise((resolve) => swapper.once('exit', resolve));
      await delay(100);
      const files = new WorkspaceFiles(ws);
      let wrote = 0;
      let leaked = 0;
      const end = Date.now() + 1000;
      while (Date.now() < end) {
        if (files.writeFile('d/planted.txt', 'x').ok) wrote++;
        if (files.readFile('d/secret.txt').text.includes('outside secret')) leaked++;
      }
      await exited;
      assert.deepEqual(readdirSync(outside), ['secret.txt']);
      assert.equal(leaked, 0);
      assert.ok(wrote > 0, 'some writes landed in the real directory, so the race was exercised');
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});
