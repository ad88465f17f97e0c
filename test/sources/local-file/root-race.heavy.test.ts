import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { describeEachSurfaceFs } from '../support/surface-fs-variants.js';
import { acquireDirect, removeDir, tempDir } from '../support/trees.js';

/**
 * The root opened in one lookup that follows its links (acquire-sync.ts, `openRoot`), against a root
 * path whose meaning changes thousands of times a second: the root is given as a symlink that an attacker
 * keeps exchanging (`renameat2(RENAME_EXCHANGE)`) with a second link, so it names directory A, then B.
 * What must hold: the root an observation reports (`resolvedRoot`, the handle's kernel path) is the
 * directory every byte was read from, whichever side of the swap the open met. Resolving the root by name
 * and then using the name is what this stops; the control does exactly that under the same race and
 * reports one directory while reading the other.
 */

const ATTACKER_SOURCE = fileURLToPath(
  new URL('../../../../test/sources/fixtures/swap-attacker.c', import.meta.url),
);
const RACE_SECONDS = Number(process.env.WITNESS_RACE_SECONDS ?? 2);

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

let work: string;
let binary: string | undefined;
let directoryA: string;
let directoryB: string;
before(() => {
  work = tempDir('witness-root-race-');
  const out = path.join(work, 'swap-attacker');
  if (spawnSync('cc', ['-O2', '-o', out, ATTACKER_SOURCE], { stdio: 'inherit' }).status === 0) binary = out;
  for (const name of ['A', 'B']) {
    fs.mkdirSync(path.join(work, name, 'sub'), { recursive: true });
    fs.writeFileSync(path.join(work, name, 'sub', 'which.txt'), `directory ${name}`);
  }
  directoryA = fs.realpathSync(path.join(work, 'A'));
  directoryB = fs.realpathSync(path.join(work, 'B'));
});
after(() => removeDir(work));

describeEachSurfaceFs('a root given through a link swapped under the acquisition', (variant) => {
  it('the reported root is the directory read, on both sides of the swap', async (t) => {
    if (binary === undefined) {
      t.skip('no C compiler (cc) to build the attacker');
      return;
    }
    const root = path.join(work, `root-${variant.name}`);
    const next = path.join(work, `next-${variant.name}`);
    fs.symlinkSync(directoryA, root);
    fs.symlinkSync(directoryB, next);
    const attacker = startAttacker(binary, root, next, RACE_SECONDS + 0.2);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const seen = { A: 0, B: 0, attempts: 0 };
    const deadline = performance.now() + RACE_SECONDS * 1000;
    while (performance.now() < deadline) {
      const result = acquireDirect(root, '/sub/which.txt', 'exact', {}, variant.fs);
      seen.attempts++;
      assert.equal(result.acquisition, 'complete', JSON.stringify(result.gaps));
      const name = result.rootPath === directoryA ? 'A' : result.rootPath === directoryB ? 'B' : undefined;
      assert.ok(name !== undefined, `reported root ${result.rootPath}`);
      assert.deepEqual(
        result.entries.map((entry) => entry.content),
        [`directory ${name}`],
        `reported ${result.rootPath}`,
      );
      seen[name]++;
    }
    const swaps = await attacker;
    console.log(`root race [${variant.name}]: ${JSON.stringify({ ...seen, swaps })}`);
    assert.ok(swaps > 1000, `the attacker only swapped ${swaps} times`);
    assert.ok(seen.A > 0 && seen.B > 0, 'the acquisitions never met both sides of the swap');
  });
});

it('control: resolving the root by name and then reading by name reports one directory and reads the other', async (t) => {
  if (binary === undefined) {
    t.skip('no C compiler (cc) to build the attacker');
    return;
  }
  const root = path.join(work, 'root-control');
  const next = path.join(work, 'next-control');
  fs.symlinkSync(directoryA, root);
  fs.symlinkSync(directoryB, next);
  const attacker = startAttacker(binary, root, next, RACE_SECONDS + 0.2);
  await new Promise((resolve) => setTimeout(resolve, 50));
  let mismatches = 0;
  const deadline = performance.now() + RACE_SECONDS * 1000;
  while (performance.now() < deadline && mismatches === 0) {
    try {
      const reported = fs.realpathSync(root);
      const text = fs.readFileSync(path.join(root, 'sub', 'which.txt'), 'utf8');
      if (text !== `directory ${reported === directoryA ? 'A' : 'B'}`) mismatches++;
    } catch {
      // Mid-swap: nothing at the path this time.
    }
  }
  await attacker;
  assert.ok(mismatches > 0, 'the by-name reader never met the swap: this race could not show a mismatch');
});
