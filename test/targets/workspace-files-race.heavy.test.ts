import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { WorkspaceFiles } from '../../src/targets/workspace-files.js';

// Another process swaps `ws/d` between a real directory and a symlink to an outside directory as fast as
// it can, while the tools write and read through `d`. Checking a path and then using it would sometimes
// land outside; walking by handle with O_NOFOLLOW never does. Heavy lane: two processes race for seconds
// (npm test keeps the static symlink refusals of workspace-files.test.ts).
const SWAPPER = `
const fs = require('node:fs');
const [ws, outside] = process.argv.slice(1, 3);
const hold = () => { const until = process.hrtime.bigint() + 200000n; while (process.hrtime.bigint() < until); };
// When a write created a real 'd' in a gap, remove it (rm never follows a link) and restore both states.
const recover = () => {
  fs.rmSync(ws + '/d', { recursive: true, force: true });
  try { fs.mkdirSync(ws + '/d_dir'); } catch {}
  try { fs.symlinkSync(outside, ws + '/d_link'); } catch {}
};
const end = Date.now() + Number(process.argv[3]);
while (Date.now() < end) {
  try { fs.renameSync(ws + '/d_dir', ws + '/d'); hold(); fs.renameSync(ws + '/d', ws + '/d_dir'); } catch { recover(); }
  try { fs.renameSync(ws + '/d_link', ws + '/d'); hold(); fs.renameSync(ws + '/d', ws + '/d_link'); } catch { recover(); }
}
`;

/** Prepares `ws/d_dir`, `ws/d_link -> outside` and an outside secret, and starts the swapper. */
function startRace(base: string, durationMs: number) {
  const ws = join(base, 'ws');
  const outside = join(base, 'outside');
  mkdirSync(join(ws, 'd_dir'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.txt'), 'outside secret');
  symlinkSync(outside, join(ws, 'd_link'));
  const swapper = spawn(process.execPath, ['-e', SWAPPER, ws, outside, String(durationMs)], {
    stdio: 'ignore',
  });
  const exited = new Promise((resolve) => swapper.once('exit', resolve));
  return { ws, outside, swapper, exited };
}

describe('WorkspaceFiles under a swap race', () => {
  it('never writes into or reads from the outside directory a swapped-in symlink points at', async () => {
    const base = mkdtempSync(join(tmpdir(), 'witness-race-'));
    try {
      const { ws, outside, exited } = startRace(base, 1500);
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

  it('control: a writer that checks the path and then uses it does leak under the same swapper', async () => {
    // Proves the test above can see a leak: the naive check-then-use (lstat, then open by path) is
    // redirected outside within a generous 20 s.
    const base = mkdtempSync(join(tmpdir(), 'witness-race-'));
    try {
      const { ws, outside, swapper, exited } = startRace(base, 20_000);
      let leaked = false;
      const end = Date.now() + 20_000;
      while (!leaked && Date.now() < end) {
        try {
          if (!lstatSync(join(ws, 'd')).isSymbolicLink()) writeFileSync(join(ws, 'd/planted.txt'), 'x');
        } catch {}
        try {
          if (!lstatSync(join(ws, 'd')).isSymbolicLink()) {
            leaked ||= readFileSync(join(ws, 'd/secret.txt'), 'utf8').includes('outside secret');
          }
        } catch {}
        leaked ||= readdirSync(outside).includes('planted.txt');
        // Let the swapper run between attempts on a loaded machine.
        if (!leaked) await delay(0);
      }
      swapper.kill();
      await exited;
      assert.ok(leaked, 'the naive writer or reader reached the outside directory');
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});
