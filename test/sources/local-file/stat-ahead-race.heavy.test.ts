import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { EntryStat } from '../../../src/sources/confined-fs/file-stat.js';
import { entryStatOf, loadStatx } from '../../../src/sources/confined-fs/statx.js';
import { type StatAt, StatRequest } from '../../../src/sources/local-file/stat-ahead.js';
import { removeDir, tempDir } from '../support/trees.js';

/**
 * Stats taken ahead (stat-ahead.ts) under the swap race of swap-race.heavy.test.ts: a C attacker exchanges,
 * with renameat2(RENAME_EXCHANGE), (1) a file with a symlink to an outside secret, or (2) the directory with
 * a symlink to an outside directory, while the walker and a second reader on another thread stat the
 * directory's names through shared requests, over and over. Each stat is one name relative to the walker's
 * directory handle, never following a link: no answer may ever be the outside secret (or an outside file),
 * whichever thread took it, and the link must be seen as a link. A control with stats that follow links (1)
 * or resolve the directory by its path (2) must see outside objects under the same race, so the zero counts
 * mean something.
 */

const RACE_SECONDS = Number(process.env.WITNESS_RACE_SECONDS ?? 2);
const ATTACKER_SOURCE = fileURLToPath(
  new URL('../../../../test/sources/fixtures/swap-attacker.c', import.meta.url),
);
const statxAt = loadStatx();

/** How a stat reaches a name: the real one, or a control that follows links / goes by the path. */
type Mode = 'confined' | 'follow' | 'by-path';

/** The same stat in the walker's thread and the reader's (the reader's code is below, as a string). */
function statFor(mode: Mode, dirPath: string): StatAt {
  if (mode === 'confined') return statxAt as StatAt;
  return (dirFd, name) => {
    const where =
      mode === 'follow' ? `/proc/self/fd/${dirFd}/${name.toString()}` : path.join(dirPath, name.toString());
    const s = fs.statSync(where);
    return entryStatOf(s.dev, s.ino, s.size, s.mode, s.mtimeMs, s.ctimeMs);
  };
}

const READER = `
const { parentPort } = require('node:worker_threads');
const fs = require('node:fs');
const path = require('node:path');
let modules;
parentPort.on('message', async (message) => {
  if (message.modules) {
    const stat = await import(message.modules.stat);
    const statx = await import(message.modules.statx);
    modules = { StatRequest: stat.StatRequest, statxAt: statx.loadStatx(), entryStatOf: statx.entryStatOf };
    parentPort.postMessage('ready');
    return;
  }
  const { shared, mode, dirPath } = message;
  const statAt = mode === 'confined' ? modules.statxAt : (dirFd, name) => {
    const where = mode === 'follow' ? '/proc/self/fd/' + dirFd + '/' + name.toString() : path.join(dirPath, name.toString());
    const s = fs.statSync(where);
    return modules.entryStatOf(s.dev, s.ino, s.size, s.mode, s.mtimeMs, s.ctimeMs);
  };
  parentPort.postMessage(modules.StatRequest.of(shared).serve(statAt, () => false));
});`;

interface Tally {
  requests: number;
  byReader: number;
  /** Answers naming an object outside the root. */
  outside: number;
  /** Answers for the swapped name that saw the link as a link (the race was met). */
  linksSeen: number;
  swaps: number;
}

describe('stats ahead under the swap race (two threads, one directory handle)', {
  skip: statxAt === undefined ? 'statx cannot be loaded here' : false,
}, () => {
  let work: string;
  let binary: string | undefined;
  let reader: Worker;
  before(async () => {
    work = tempDir('witness-stat-race-');
    const out = path.join(work, 'swap-attacker');
    const compiled = spawnSync('cc', ['-O2', '-o', out, ATTACKER_SOURCE], { stdio: 'inherit' });
    if (compiled.status === 0) binary = out;
    reader = new Worker(READER, { eval: true });
    const ready = new Promise((resolve) => reader.once('message', resolve));
    reader.postMessage({
      modules: {
        stat: new URL('../../../src/sources/local-file/stat-ahead.js', import.meta.url).href,
        statx: new URL('../../../src/sources/confined-fs/statx.js', import.meta.url).href,
      },
    });
    await ready;
  });
  after(async () => {
    await reader.terminate();
    removeDir(work);
  });

  /** ws/dir: target.txt, 40 fillers, decoy → outside/secret.txt; ws/dirlink → outside/dir. */
  function arena() {
    const base = tempDir('witness-stat-race-arena-');
    const root = path.join(base, 'ws');
    const outside = path.join(base, 'outside');
    fs.mkdirSync(path.join(root, 'dir'), { recursive: true });
    fs.mkdirSync(path.join(outside, 'dir'), { recursive: true });
    fs.writeFileSync(path.join(root, 'dir', 'target.txt'), 'INSIDE');
    for (let i = 0; i < 40; i++) fs.writeFileSync(path.join(root, 'dir', `f${i}.txt`), 'INSIDE');
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'OUTSIDE-SECRET');
    fs.writeFileSync(path.join(outside, 'dir', 'target.txt'), 'OUTSIDE-SECRET');
    for (let i = 0; i < 40; i++) fs.writeFileSync(path.join(outside, 'dir', `f${i}.txt`), 'OUTSIDE');
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'dir', 'decoy'));
    fs.symlinkSync(path.join(outside, 'dir'), path.join(root, 'dirlink'));
    // Every inode outside the root, to recognise an answer that reached one.
    const outsideInodes = new Set<number>();
    const walk = (at: string) => {
      outsideInodes.add(fs.lstatSync(at).ino);
      if (fs.lstatSync(at).isDirectory()) for (const name of fs.readdirSync(at)) walk(path.join(at, name));
    };
    walk(outside);
    return { base, root, outsideInodes };
  }

  async function race(mode: Mode, swap: 'file' | 'parent'): Promise<Tally> {
    if (binary === undefined) throw new Error('no attacker');
    const { base, root, outsideInodes } = arena();
    const dirPath = path.join(root, 'dir');
    // The walker's handle, opened before the race (as the walk opens it once, placed, and holds it).
    const dirFd = fs.openSync(dirPath, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
    const names = ['decoy', 'target.txt', ...Array.from({ length: 40 }, (_, i) => `f${i}.txt`)].map((n) =>
      Buffer.from(n),
    );
    const [a, b] =
      swap === 'file'
        ? [path.join(dirPath, 'target.txt'), path.join(dirPath, 'decoy')]
        : [dirPath, path.join(root, 'dirlink')];
    const attacker = spawn(binary, [a, b, String(RACE_SECONDS + 0.2)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    attacker.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    const attackerDone = new Promise<number>((resolve, reject) => {
      attacker.on('error', reject);
      attacker.on('close', (code) =>
        code === 0
          ? resolve(Number(stdout.trim().split(' ')[0]))
          : reject(new Error(`attacker exited with ${code}`)),
      );
    });
    const tally: Tally = { requests: 0, byReader: 0, outside: 0, linksSeen: 0, swaps: 0 };
    const statAt = statFor(mode, dirPath);
    try {
      await new Promise((resolve) => setTimeout(resolve, 50));
      const deadline = performance.now() + RACE_SECONDS * 1000;
      while (performance.now() < deadline) {
        const request = StatRequest.create(dirFd, names);
        const served = new Promise((resolve) => reader.once('message', resolve));
        reader.postMessage({ shared: request.shared, mode, dirPath });
        // Give the reader a head start, so that it takes names too (the walker claims the rest).
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 0.2);
        const { answers, byReader } = request.collect(
          statAt,
          () => false,
          () => {},
        );
        await served;
        tally.requests++;
        tally.byReader += byReader;
        answers.forEach((answer, i) => {
          if (answer instanceof Error) return;
          const stat = answer as EntryStat;
          if (outsideInodes.has(stat.ino)) tally.outside++;
          if (i < 2 && stat.isSymbolicLink()) tally.linksSeen++;
        });
      }
    } finally {
      tally.swaps = await attackerDone.catch((error: unknown) => {
        attacker.kill('SIGKILL');
        throw error;
      });
      fs.closeSync(dirFd);
      removeDir(base);
    }
    return tally;
  }

  for (const swap of ['file', 'parent'] as const) {
    const scenario =
      swap === 'file'
        ? 'a file swapped with a symlink to an outside secret'
        : 'the directory swapped with a symlink to an outside directory';
    it(`${scenario}: no answer, from either thread, names anything outside`, async (t) => {
      if (binary === undefined) {
        t.skip('no C compiler (cc) to build the attacker');
        return;
      }
      const tally = await race('confined', swap);
      console.log(`stat-ahead race [${swap}]: ${JSON.stringify(tally)}`);
      assert.ok(tally.swaps > 1000, `the attacker only swapped ${tally.swaps} times`);
      assert.ok(tally.requests > 10, `only ${tally.requests} requests ran`);
      assert.ok(tally.byReader > 0, 'the second reader answered names');
      assert.equal(tally.outside, 0, 'an answer named an object outside the root');
      // The swapped names are answered as what they are: the link as a link, never as its target.
      if (swap === 'file') assert.ok(tally.linksSeen > 0, 'the link was answered as a link');
    });

    it(`control: stats that ${swap === 'file' ? 'follow links' : 'go by the path'} reach outside under the same race`, async (t) => {
      if (binary === undefined) {
        t.skip('no C compiler (cc) to build the attacker');
        return;
      }
      const tally = await race(swap === 'file' ? 'follow' : 'by-path', swap);
      console.log(`stat-ahead race control [${swap}]: ${JSON.stringify(tally)}`);
      assert.ok(tally.outside > 0, 'the control never reached outside: the race proves nothing');
    });
  }
});
