import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { SurfaceEntry } from '../../../src/models/observation.js';
import type { MatchKind } from '../../../src/models/vocabulary.js';
import { loadOpenat2 } from '../../../src/sources/confined-fs/openat2.js';
import { openat2SurfaceFs } from '../../../src/sources/confined-fs/openat2-surface-fs.js';
import { nodeSurfaceFs, type SurfaceFs } from '../../../src/sources/confined-fs/surface-fs.js';
import type { AcquireResult } from '../../../src/sources/local-file/acquire-sync.js';
import { acquisitionPool, POOL_SIZE } from '../../../src/sources/local-file/acquisition-pool.js';
import { DEFAULT_LIMITS } from '../../../src/sources/local-file/limits.js';
import { unpackSurfaceEntries } from '../../../src/sources/local-file/surface-entry-unpacking.js';
import { LocalFileSurfaceSource, releaseAcquisitionThreads } from '../../../src/sources/local-file-source.js';
import { recordingFs } from '../support/recording-fs.js';
import { SURFACE_FS_VARIANTS } from '../support/surface-fs-variants.js';
import { acquireDirect, removeDir, tempDir } from '../support/trees.js';

/**
 * The swap-race harness (SPEC §5.1, issue 3). A C attacker exchanges, with renameat2(RENAME_EXCHANGE),
 * (1) the target file with a symlink to an outside secret and (2) its parent directory with a symlink to
 * an outside directory, while acquisitions of an exact locator, a one-level glob and a recursive glob run
 * in a loop. Through the seam we record every name a listing returned, every handle opened for reading
 * and every byte read, and assert that none of it was outside the root, while inside reads still happen.
 *
 * A control run with a reader that trusts paths (no O_NOFOLLOW, no handle check) must leak under the same
 * race: that proves the harness races hard enough for its zero counts to mean something.
 */

const RACE_SECONDS = Number(process.env.WITNESS_RACE_SECONDS ?? 2);
const ATTACKER_SOURCE = fileURLToPath(
  new URL('../../../../test/sources/fixtures/swap-attacker.c', import.meta.url),
);
const INSIDE = 'INSIDE-CONTENT';
const SECRET = 'OUTSIDE-SECRET';

interface RaceTally {
  attempts: number;
  insideReads: number;
  outsideBytes: number;
  outsideNames: number;
  outsideOpens: number;
  outsideInEvidence: number;
  swaps: number;
}

interface Arena {
  base: string;
  root: string;
  outside: string;
}

/**
 * root/dir/target.txt (+ siblings), root/dir/decoy → outside secret, root/dirlink → outside/dir, and
 * root/gitlink → dir: a link beneath the root, which the walk follows (as `.git -> real-git`).
 */
function buildArena(): Arena {
  const base = tempDir('witness-race-');
  const root = path.join(base, 'ws');
  const outside = path.join(base, 'outside');
  fs.mkdirSync(path.join(root, 'dir'), { recursive: true });
  fs.mkdirSync(path.join(outside, 'dir'), { recursive: true });
  fs.writeFileSync(path.join(root, 'dir', 'target.txt'), INSIDE);
  fs.writeFileSync(path.join(root, 'dir', 'other.txt'), INSIDE);
  fs.writeFileSync(path.join(outside, 'secret.txt'), SECRET);
  fs.writeFileSync(path.join(outside, 'dir', 'target.txt'), SECRET);
  fs.writeFileSync(path.join(outside, 'dir', 'outside-name.txt'), SECRET);
  fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'dir', 'decoy'));
  fs.symlinkSync(path.join(outside, 'dir'), path.join(root, 'dirlink'));
  fs.symlinkSync('dir', path.join(root, 'gitlink'));
  return { base, root, outside };
}

function startAttacker(binary: string, a: string, b: string, seconds: number) {
  const child = spawn(binary, [a, b, String(seconds)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  const done = new Promise<number>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`attacker exited with ${code}`));
      else resolve(Number(stdout.trim().split(' ')[0]));
    });
  });
  return { done, kill: () => child.kill('SIGKILL') };
}

/** Acquires in a loop while the attacker swaps `a` and `b`, tallying what crossed the root. */
/** A glob acquisition on the shared pool (second reader allowed), with every streamed entry. */
function poolGlob(
  root: string,
  uri: string,
  surfaceFs: 'procfs' | 'openat2',
): Promise<{ result: AcquireResult; entries: SurfaceEntry[] }> {
  return new Promise((resolve, reject) => {
    const entries: SurfaceEntry[] = [];
    acquisitionPool.submit(
      {
        request: { root, uri, match: 'glob', limits: { ...DEFAULT_LIMITS } },
        surfaceFs,
        cancel: new SharedArrayBuffer(4),
      },
      {
        onEntries: (batch) => entries.push(...unpackSurfaceEntries(batch)),
        onDone: (outcome) => {
          if (outcome.kind !== 'done') reject(new Error('cancelled'));
          else resolve({ result: outcome.result, entries: entries.concat(outcome.result.entries) });
        },
        onFailure: reject,
      },
    );
  });
}

async function race(
  binary: string,
  arena: Arena,
  swap: [string, string],
  uri: string,
  match: MatchKind,
  surfaceFs: SurfaceFs = nodeSurfaceFs,
  seconds = RACE_SECONDS,
): Promise<RaceTally> {
  const attacker = startAttacker(binary, swap[0], swap[1], seconds + 0.2);
  const tally: RaceTally = {
    attempts: 0,
    insideReads: 0,
    outsideBytes: 0,
    outsideNames: 0,
    outsideOpens: 0,
    outsideInEvidence: 0,
    swaps: 0,
  };
  const rootPrefix = `${arena.root}/`;
  const isInside = (where: string) => where.startsWith(rootPrefix);
  try {
    // Give the attacker a head start so every acquisition runs during the swapping.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const deadline = performance.now() + seconds * 1000;
    while (performance.now() < deadline) {
      const { fs: seam, recording } = recordingFs({}, surfaceFs);
      const result = acquireDirect(arena.root, uri, match, {}, seam);
      tally.attempts++;
      for (const [where, bytes] of recording.bytesByPath) if (!isInside(where)) tally.outsideBytes += bytes;
      tally.outsideNames += recording.listedNames.filter((name) => !isInside(name)).length;
      tally.outsideOpens += recording.opened.filter((where) => !isInside(where)).length;
      for (const entry of result.entries) {
        if (entry.content?.includes(SECRET) || entry.uri.includes('outside-name')) tally.outsideInEvidence++;
        if (entry.content === INSIDE) tally.insideReads++;
      }
    }
  } finally {
    tally.swaps = await attacker.done.catch((error: unknown) => {
      attacker.kill();
      throw error;
    });
  }
  return tally;
}

describe('swap race: renameat2(RENAME_EXCHANGE) against the confined walk', () => {
  let work: string;
  let binary: string | undefined;
  before(() => {
    work = tempDir('witness-attacker-');
    const out = path.join(work, 'swap-attacker');
    const compiled = spawnSync('cc', ['-O2', '-o', out, ATTACKER_SOURCE], { stdio: 'inherit' });
    if (compiled.status === 0) binary = out;
  });
  after(() => removeDir(work));

  const scenarios: [string, (arena: Arena) => [string, string]][] = [
    [
      'the target file swapped with a symlink to an outside secret',
      (arena) => [path.join(arena.root, 'dir', 'target.txt'), path.join(arena.root, 'dir', 'decoy')],
    ],
    [
      'the parent directory swapped with a symlink to an outside directory',
      (arena) => [path.join(arena.root, 'dir'), path.join(arena.root, 'dirlink')],
    ],
  ];
  const locators: [string, MatchKind][] = [
    ['/dir/target.txt', 'exact'],
    ['/dir/*', 'glob'],
    ['/**', 'glob'],
  ];
  // Through the in-root link: the directory it leads to is swapped for a link to the outside while the
  // link is resolved beneath the root and its real directory opened again (SPEC §13).
  const linked: [string, (arena: Arena) => [string, string], [string, MatchKind][]] = [
    'the directory an in-root link leads to swapped with a symlink to an outside directory',
    (arena) => [path.join(arena.root, 'dir'), path.join(arena.root, 'dirlink')],
    [
      ['/gitlink/target.txt', 'exact'],
      ['/gitlink/*', 'glob'],
    ],
  ];

  for (const variant of SURFACE_FS_VARIANTS) {
    const cases: [string, (arena: Arena) => [string, string], [string, MatchKind][]][] = [
      ...scenarios.map(([scenario, swapOf]) => [scenario, swapOf, locators] as const),
      linked,
    ].map(([scenario, swapOf, uris]) => [scenario, swapOf, [...uris]]);
    for (const [scenario, swapOf, uris] of cases) {
      for (const [uri, match] of uris) {
        it(`[${variant.name}] ${scenario}: ${uri} (${match}) reads and lists nothing outside`, async (t) => {
          if (variant.skip !== false) {
            t.skip(variant.skip);
            return;
          }
          if (binary === undefined) {
            t.skip('no C compiler (cc) to build the attacker');
            return;
          }
          const arena = buildArena();
          try {
            const tally = await race(binary, arena, swapOf(arena), uri, match, variant.fs);
            console.log(`swap race [${variant.name}] [${scenario}] ${uri}: ${JSON.stringify(tally)}`);
            assert.ok(tally.swaps > 1000, `the attacker only swapped ${tally.swaps} times`);
            // A floor, not a speed target: enough acquisitions overlapped the swapping to make the zero counts
            // below mean something, even on a loaded machine (the swap count proves the race ran).
            assert.ok(tally.attempts > 10, `only ${tally.attempts} acquisitions ran`);
            assert.equal(tally.outsideBytes, 0, 'outside bytes were read');
            assert.equal(tally.outsideNames, 0, 'outside names were listed');
            assert.equal(tally.outsideOpens, 0, 'an outside file was opened for reading');
            assert.equal(tally.outsideInEvidence, 0, 'outside content reached the evidence');
            assert.ok(tally.insideReads > 0, 'no inside read succeeded: the walk refused everything');
          } finally {
            removeDir(arena.base);
          }
        });
      }
    }

    it(`[${variant.name}] the observations of the real worker carry nothing from outside under the parent swap`, async (t) => {
      if (variant.skip !== false) {
        t.skip(variant.skip);
        return;
      }
      if (binary === undefined) {
        t.skip('no C compiler (cc) to build the attacker');
        return;
      }
      const arena = buildArena();
      const source = new LocalFileSurfaceSource({ root: arena.root, surfaceFs: variant.name });
      const attacker = startAttacker(
        binary,
        path.join(arena.root, 'dir'),
        path.join(arena.root, 'dirlink'),
        1.2,
      );
      let attempts = 0;
      let insideReads = 0;
      try {
        const deadline = performance.now() + 1000;
        while (performance.now() < deadline) {
          for (const [uri, match] of locators) {
            const observation = await source.acquire({ scorableType: 'surface', uri, match });
            attempts++;
            const text = JSON.stringify(observation.payload);
            assert.ok(!text.includes(SECRET) && !text.includes('outside-name'), text);
            assert.equal(observation.metadata.surfaceFs, variant.name);
            if (observation.payload.entries.some((entry) => entry.content === INSIDE)) insideReads++;
          }
        }
      } finally {
        const swaps = await attacker.done;
        await source.close();
        removeDir(arena.base);
        console.log(
          `swap race [${variant.name}] [worker, parent swap]: ${attempts} acquisitions, ${insideReads} with inside reads, ${swaps} swaps`,
        );
      }
      assert.ok(insideReads > 0);
    });
  }

  for (const variant of SURFACE_FS_VARIANTS) {
    it(`[${variant.name}] with a second reader thread: nothing from outside under either swap`, async (t) => {
      if (variant.skip !== false) {
        t.skip(variant.skip);
        return;
      }
      if (binary === undefined) {
        t.skip('no C compiler (cc) to build the attacker');
        return;
      }
      if (POOL_SIZE < 2) {
        t.skip('one core: the pool has no thread for a second reader');
        return;
      }
      // Enough files beside the target that the walk asks for a second reader, which then reads handles
      // the walk proved inside while the attacker swaps; the outside directory mirrors them with secrets.
      const arena = buildArena();
      for (let i = 0; i < 80; i++) {
        fs.writeFileSync(path.join(arena.root, 'dir', `fill${i}.txt`), INSIDE);
        fs.writeFileSync(path.join(arena.outside, 'dir', `fill${i}.txt`), SECRET);
      }
      let attempts = 0;
      let helped = 0;
      let insideReads = 0;
      try {
        for (const swap of [
          [path.join(arena.root, 'dir', 'target.txt'), path.join(arena.root, 'dir', 'decoy')],
          [path.join(arena.root, 'dir'), path.join(arena.root, 'dirlink')],
        ] as const) {
          const attacker = startAttacker(binary, swap[0], swap[1], 1.2);
          try {
            const deadline = performance.now() + 1000;
            while (performance.now() < deadline) {
              for (const uri of ['/dir/*', '/**']) {
                const { result, entries } = await poolGlob(arena.root, uri, variant.name);
                attempts++;
                if ((result.helperBatches ?? 0) > 0) helped++;
                const text = JSON.stringify({ entries, gaps: result.gaps });
                assert.ok(!text.includes(SECRET) && !text.includes('outside-name'), text);
                if (entries.some((entry) => entry.content === INSIDE)) insideReads++;
              }
            }
          } finally {
            await attacker.done;
          }
        }
      } finally {
        await releaseAcquisitionThreads();
        removeDir(arena.base);
        console.log(
          `swap race [${variant.name}] [two readers]: ${attempts} acquisitions, ${helped} used the second reader, ${insideReads} with inside reads`,
        );
      }
      assert.ok(insideReads > 0);
      assert.ok(helped > 0, 'the second reader took part in at least one acquisition');
    });
  }

  it('control: a reader that trusts paths leaks under the same race, so the zero counts above mean something', async (t) => {
    if (binary === undefined) {
      t.skip('no C compiler (cc) to build the attacker');
      return;
    }
    const arena = buildArena();
    // Follows a swapped-in symlink when opening a directory and believes every handle is where its path
    // says: the check-then-use reader SPEC §5.1 measured leaking thousands of names in ten seconds.
    const naive: SurfaceFs = {
      ...nodeSurfaceFs,
      openDirectoryAt: (dirFd, name) =>
        fs.openSync(
          Buffer.concat([Buffer.from(`/proc/self/fd/${dirFd}/`), name]),
          fs.constants.O_RDONLY | fs.constants.O_DIRECTORY,
        ),
      handlePath: (fd) => {
        const real = nodeSurfaceFs.handlePath(fd);
        return real.toString().startsWith(arena.root) ? real : Buffer.from(path.join(arena.root, 'trusted'));
      },
    };
    try {
      // A loaded machine can starve one short round of swaps; the harness is only too weak if a naive
      // reader survives several rounds in a row.
      let leaked = 0;
      for (let round = 1; round <= 6 && leaked === 0; round++) {
        const tally = await race(
          binary,
          arena,
          [path.join(arena.root, 'dir'), path.join(arena.root, 'dirlink')],
          '/dir/*',
          'glob',
          naive,
          2,
        );
        console.log(`swap race [control, naive reader, round ${round}]: ${JSON.stringify(tally)}`);
        leaked = tally.outsideNames + tally.outsideBytes;
      }
      assert.ok(leaked > 0, 'the naive reader did not leak in six rounds: the race is too weak');
    } finally {
      removeDir(arena.base);
    }
  });

  it('control [openat2]: the same seam without its resolve flags leaks, so its zero counts mean something', async (t) => {
    const loaded = loadOpenat2();
    if (!loaded.available) {
      t.skip(`openat2 unavailable: ${loaded.reason}`);
      return;
    }
    if (binary === undefined) {
      t.skip('no C compiler (cc) to build the attacker');
      return;
    }
    const arena = buildArena();
    // The openat2 seam with RESOLVE_BENEATH / RESOLVE_NO_SYMLINKS stripped and a handle check that
    // believes every path: only the kernel's resolve flags stood between the walk and the outside.
    const { binding } = loaded;
    const stripped = openat2SurfaceFs({
      ...binding,
      openat2: (dirFd, p, flags) => binding.openat2(dirFd, p, flags, 0),
    });
    const naive: SurfaceFs = {
      ...stripped,
      handlePath: (fd) => {
        const real = nodeSurfaceFs.handlePath(fd);
        return real.toString().startsWith(arena.root) ? real : Buffer.from(path.join(arena.root, 'trusted'));
      },
    };
    try {
      let leaked = 0;
      for (let round = 1; round <= 6 && leaked === 0; round++) {
        const tally = await race(
          binary,
          arena,
          [path.join(arena.root, 'dir'), path.join(arena.root, 'dirlink')],
          '/dir/*',
          'glob',
          naive,
          2,
        );
        console.log(
          `swap race [control, openat2 without resolve flags, round ${round}]: ${JSON.stringify(tally)}`,
        );
        leaked = tally.outsideNames + tally.outsideBytes;
      }
      assert.ok(leaked > 0, 'the unflagged openat2 reader did not leak in six rounds: the race is too weak');
    } finally {
      removeDir(arena.base);
    }
  });
});
