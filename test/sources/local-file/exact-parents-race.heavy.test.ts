import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { SurfaceFs } from '../../../src/sources/confined-fs/surface-fs.js';
import { SURFACE_FS_VARIANTS } from '../support/surface-fs-variants.js';
import { acquireDirect, removeDir, tempDir } from '../support/trees.js';

/**
 * The attack the one-lookup open of an exact locator's parents must still stop (exact-walk.ts,
 * `openDirectoriesAt` on the openat2 seam): a parent directory swapped, thousands of times a second, with
 * a symlink to an outside directory holding a file of the same name. The lookup refuses every symlink on
 * the way and stays beneath the root handle (the kernel checks both while resolving), so whichever side
 * of the swap it meets, it opens the inside directory or fails — and a failure walks the parents one at a
 * time, which names the link. The control run proves the race is real: a reader that checks the path and
 * then reads it by name reads the outside secret in the same minutes.
 */

const ATTACKER_SOURCE = fileURLToPath(
  new URL('../../../../test/sources/fixtures/swap-attacker.c', import.meta.url),
);
const RACE_SECONDS = Number(process.env.WITNESS_RACE_SECONDS ?? 2);
const INSIDE = 'INSIDE-CONTENT';
const SECRET = 'OUTSIDE-SECRET';
const URI = '/a/dir/sub/target.txt';

const openat2 = SURFACE_FS_VARIANTS.find((variant) => variant.name === 'openat2');

function startAttacker(binary: string, a: string, b: string, seconds: number): Promise<number> {
  const child = spawn(binary, [a, b, String(seconds)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  return new Promise<number>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`attacker exited with ${code}`));
      else resolve(Number(stdout.trim().split(' ')[0]));
    });
  });
}

describe('exact parents in one lookup, against a parent swapped with a link to the outside', {
  skip: openat2?.skip,
}, () => {
  let work: string;
  let binary: string | undefined;
  let root: string;
  before(() => {
    work = tempDir('witness-exact-race-');
    const out = path.join(work, 'swap-attacker');
    if (spawnSync('cc', ['-O2', '-o', out, ATTACKER_SOURCE], { stdio: 'inherit' }).status === 0) {
      binary = out;
    }
    root = path.join(work, 'ws');
    const outside = path.join(work, 'outside');
    fs.mkdirSync(path.join(root, 'a', 'dir', 'sub'), { recursive: true });
    fs.mkdirSync(path.join(outside, 'dir', 'sub'), { recursive: true });
    fs.writeFileSync(path.join(root, 'a', 'dir', 'sub', 'target.txt'), INSIDE);
    fs.writeFileSync(path.join(outside, 'dir', 'sub', 'target.txt'), SECRET);
    fs.symlinkSync(path.join(outside, 'dir'), path.join(root, 'a', 'dirlink'));
  });
  after(() => removeDir(work));

  it('reads nothing outside, and both the one lookup and the walk one at a time ran', async (t) => {
    if (binary === undefined) {
      t.skip('no C compiler (cc) to build the attacker');
      return;
    }
    const base = openat2?.fs as SurfaceFs;
    const one = base.openDirectoriesAt?.bind(base);
    assert.ok(one !== undefined, 'the openat2 seam offers the one lookup');
    const tally = { attempts: 0, insideReads: 0, outsideBytes: 0, oneOpened: 0, oneRefused: 0, gaps: 0 };
    const rootPrefix = `${fs.realpathSync(root)}/`;
    const seam: SurfaceFs = {
      ...base,
      openDirectoriesAt: (dirFd, names) => {
        const fd = one(dirFd, names);
        if (fd === undefined) tally.oneRefused++;
        else tally.oneOpened++;
        return fd;
      },
      read: (fd, buffer, length) => {
        // Where the bytes come from, asked of the kernel (never of the seam under test).
        const where = fs.readlinkSync(`/proc/self/fd/${fd}`);
        const n = base.read(fd, buffer, length);
        if (!where.startsWith(rootPrefix)) tally.outsideBytes += n;
        return n;
      },
    };
    const attacker = startAttacker(
      binary,
      path.join(root, 'a', 'dir'),
      path.join(root, 'a', 'dirlink'),
      RACE_SECONDS + 0.2,
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    const deadline = performance.now() + RACE_SECONDS * 1000;
    while (performance.now() < deadline) {
      const result = acquireDirect(root, URI, 'exact', {}, seam);
      tally.attempts++;
      tally.gaps += result.gaps.length;
      for (const entry of result.entries) {
        assert.ok(!entry.content?.includes(SECRET), 'outside content reached the evidence');
        if (entry.content === INSIDE) tally.insideReads++;
      }
    }
    const swaps = await attacker;
    console.log(`exact parents race: ${JSON.stringify({ ...tally, swaps })}`);
    assert.ok(swaps > 1000, `the attacker only swapped ${swaps} times`);
    assert.ok(tally.attempts > 10, `only ${tally.attempts} acquisitions ran`);
    assert.equal(tally.outsideBytes, 0, 'outside bytes were read');
    assert.ok(tally.insideReads > 0, 'no inside read succeeded');
    assert.ok(tally.oneOpened > 0, 'the one lookup never succeeded during the race');
    assert.ok(tally.oneRefused > 0, 'the one lookup never met the link: the race did not reach it');
  });

  it('control: a reader that resolves the path by name reads the outside secret under the same race', async (t) => {
    if (binary === undefined) {
      t.skip('no C compiler (cc) to build the attacker');
      return;
    }
    const attacker = startAttacker(
      binary,
      path.join(root, 'a', 'dir'),
      path.join(root, 'a', 'dirlink'),
      RACE_SECONDS + 0.2,
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    let leaks = 0;
    const deadline = performance.now() + RACE_SECONDS * 1000;
    while (performance.now() < deadline && leaks === 0) {
      try {
        if (fs.readFileSync(path.join(root, URI), 'utf8') === SECRET) leaks++;
      } catch {
        // Mid-swap: nothing at the path this time.
      }
    }
    await attacker;
    assert.ok(leaks > 0, 'the naive reader never met the swapped link: this race could not show a leak');
  });
});
