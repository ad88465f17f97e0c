import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmdirSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { removeTree } from '../../../src/sources/confined-fs/remove-tree.js';

/**
 * The cleanup symlink-swap race (issue 10): the agent runs as a less privileged user (uid 65534) and
 * Witness as root. While Witness removes the workspace, a daemon of the agent's keeps exchanging a
 * subdirectory with a symlink to a root-only directory (`renameat2(RENAME_EXCHANGE)`). A path-based
 * remover then deletes files in the root-only directory; the handle-relative walk must not.
 */

const NOBODY = 65534;
const FILES = 400;
const isRoot = process.getuid?.() === 0;

// The daemon: exchange two names as fast as possible until killed.
const SWAPPER = `
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b = sys.argv[1].encode(), sys.argv[2].encode()
while True:
    libc.renameat2(-100, a, -100, b, 2)
`;

interface Setup {
  base: string;
  secret: string;
  ws: string;
  daemon: ChildProcess;
}

async function mountAttack(): Promise<Setup> {
  const base = mkdtempSync(join('/var/tmp', 'witness-race-'));
  chmodSync(base, 0o755);
  const secret = join(base, 'secret');
  mkdirSync(secret, { mode: 0o700 });
  const ws = join(base, 'ws');
  mkdirSync(join(ws, 'sub'), { recursive: true });
  for (let i = 0; i < FILES; i++) {
    writeFileSync(join(secret, `f${i}`), 'root-only');
    writeFileSync(join(ws, 'sub', `f${i}`), 'agent');
  }
  symlinkSync(secret, join(ws, 'link'));
  for (const path of [ws, join(ws, 'sub')]) chownSync(path, NOBODY, NOBODY);
  lstatSync(join(ws, 'link'));
  const daemon = spawn('python3', ['-c', SWAPPER, join(ws, 'sub'), join(ws, 'link')], {
    uid: NOBODY,
    gid: NOBODY,
    stdio: 'ignore',
  });
  // Wait until the daemon is exchanging (under load python can take seconds to start): a fixed pause let
  // the control run its whole removal before the first swap, and it then saw no leak.
  const until = Date.now() + 30_000;
  while (!lstatSync(join(ws, 'sub')).isSymbolicLink() && Date.now() < until) await delay(5);
  return { base, secret, ws, daemon };
}

async function tearDown(setup: Setup): Promise<number> {
  setup.daemon.kill('SIGKILL');
  await new Promise((resolve) => setup.daemon.once('exit', resolve));
  const left = readdirSync(setup.secret).length;
  rmSync(setup.base, { recursive: true, force: true });
  return left;
}

/** The control: a remover that builds paths and re-resolves them at every step. */
function naiveRemove(path: string): void {
  let names: string[];
  try {
    names = readdirSync(path);
  } catch {
    return;
  }
  for (const name of names) {
    const child = `${path}/${name}`;
    try {
      if (lstatSync(child).isDirectory()) naiveRemove(child);
      else unlinkSync(child);
    } catch {
      // the race moved it
    }
  }
  try {
    rmdirSync(path);
  } catch {
    // not empty or gone
  }
}

describe('cleanup under a symlink-swap race', {
  skip: isRoot ? false : 'needs root (the agent runs as uid 65534)',
}, () => {
  it('the control: a path-based remover deletes files in the root-only directory', async () => {
    let leaked = 0;
    // Up to 50 trials until one leaks (each ≈ 0.1 s): ten all missed the swap once in CI (Node 20).
    for (let trial = 0; trial < 50 && leaked === 0; trial++) {
      const setup = await mountAttack();
      naiveRemove(setup.ws);
      leaked = FILES - (await tearDown(setup));
    }
    assert.ok(leaked > 0, 'the race never produced a leak: this test could not see one');
  });

  it('the handle-relative walk never deletes outside the workspace', async () => {
    for (let trial = 0; trial < 10; trial++) {
      const setup = await mountAttack();
      const report = removeTree(setup.ws);
      const left = await tearDown(setup);
      assert.equal(left, FILES, `trial ${trial}: ${FILES - left} root-only files deleted`);
      assert.equal(typeof report.removed, 'boolean');
    }
  });
});
