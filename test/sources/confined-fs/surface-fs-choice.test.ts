import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { InvalidOptionError } from '../../../src/errors.js';
import { AT_REMOVEDIR, loadOpenat2, RESOLVE_BENEATH } from '../../../src/sources/confined-fs/openat2.js';
import { openat2SurfaceFs } from '../../../src/sources/confined-fs/openat2-surface-fs.js';
import { O_PATH } from '../../../src/sources/confined-fs/surface-fs.js';
import { LocalFileSurfaceSource } from '../../../src/sources/local-file-source.js';
import { sampleSize } from '../../support/sample-size.js';
import { runNode, writeChildScript } from '../support/child-process.js';
import { buildTree, removeDir, tempDir } from '../support/trees.js';

/**
 * Choosing the seam: `auto` takes openat2 where the kernel and koffi allow it and procfs otherwise; a
 * process where koffi cannot load still acquires correctly, through procfs; the openat2 seam proves
 * placement only for what the kernel resolved beneath the root.
 */

const loaded = loadOpenat2();
const openat2Skip = loaded.available ? false : `openat2 unavailable: ${loaded.reason}`;

/** Makes `require('koffi')` throw in every thread of the child, as on a machine without its binary. */
const NO_KOFFI = `
const Module = require('node:module');
const load = Module._load;
Module._load = function (request, ...rest) {
  if (request === 'koffi') throw new Error('simulated: koffi cannot load on this machine');
  return load.call(this, request, ...rest);
};
`;

const ACQUIRE = `
import { LocalFileSurfaceSource } from '{{SOURCE}}';
const [root, surfaceFs] = process.argv.slice(2);
const source = new LocalFileSurfaceSource({ root, surfaceFs });
const out = [];
for (const [uri, match] of [['/**', 'glob'], ['/escape', 'exact'], ['/a/inside.txt', 'exact']]) {
  const observation = await source.acquire({ scorableType: 'surface', uri, match });
  out.push({
    surfaceFs: observation.metadata.surfaceFs ?? null,
    error: observation.metadata.error ?? null,
    acquisition: observation.acquisition,
    entries: observation.payload.entries.map((entry) => entry.uri + '=' + entry.content),
    gaps: observation.payload.coverage.gaps.map((gap) => gap.reason + ' ' + gap.uri),
  });
}
process.stdout.write(JSON.stringify(out));
`;

describe('choosing the seam', () => {
  let dir: string;
  let root: string;
  before(() => {
    dir = tempDir();
    root = path.join(dir, 'ws');
    fs.mkdirSync(root);
    fs.writeFileSync(path.join(dir, 'secret.txt'), 'OUTSIDE');
    buildTree(root, {
      a: { dir: { 'inside.txt': 'in', back: { symlink: '../b/target.txt' } } },
      b: { dir: { 'target.txt': 'target' } },
      escape: { symlink: '../secret.txt' },
    });
    fs.writeFileSync(path.join(dir, 'no-koffi.cjs'), NO_KOFFI, { mode: 0o644 });
  });
  after(() => removeDir(dir));

  const expectedGlob = {
    acquisition: 'partial',
    entries: ['/a/back=target', '/a/inside.txt=in', '/b/target.txt=target'],
    gaps: ['link_outside_root /escape'],
  };

  it('rejects an unknown surfaceFs, naming the choices', () => {
    assert.throws(
      () => new LocalFileSurfaceSource({ root, surfaceFs: 'fast' as 'auto' }),
      (error: unknown) => error instanceof InvalidOptionError && /auto, openat2, procfs/.test(error.message),
    );
  });

  it('auto uses openat2 where it is available, and both forced choices give the same evidence', async (t) => {
    if (openat2Skip) {
      t.skip(openat2Skip);
      return;
    }
    const results = [];
    for (const surfaceFs of ['auto', 'openat2', 'procfs'] as const) {
      const source = new LocalFileSurfaceSource({ root, surfaceFs });
      const observation = await source.acquire({ scorableType: 'surface', uri: '/**', match: 'glob' });
      results.push({ used: observation.metadata.surfaceFs, payload: observation.payload });
    }
    assert.deepEqual(
      results.map((result) => result.used),
      ['openat2', 'openat2', 'procfs'],
    );
    assert.deepEqual(results[0]?.payload, results[2]?.payload);
    assert.deepEqual(results[1]?.payload, results[2]?.payload);
  });

  it('where koffi cannot load, auto falls back to procfs and the evidence is the same; a forced openat2 says why it cannot run', async () => {
    const script = writeChildScript(dir, 'acquire.mjs', ACQUIRE);
    const run = async (surfaceFs: string, preload: boolean) => {
      const args = preload ? ['--require', path.join(dir, 'no-koffi.cjs'), script] : [script];
      const result = await runNodeArgs(args, [root, surfaceFs]);
      assert.equal(result.code, 0, result.stderr);
      return JSON.parse(result.stdout) as {
        surfaceFs: string | null;
        error: string | null;
        acquisition: string;
        entries: string[];
        gaps: string[];
      }[];
    };
    const fallback = await run('auto', true);
    assert.deepEqual(
      fallback.map((one) => one.surfaceFs),
      ['procfs', 'procfs', 'procfs'],
    );
    assert.deepEqual(
      { acquisition: fallback[0]?.acquisition, entries: fallback[0]?.entries, gaps: fallback[0]?.gaps },
      expectedGlob,
    );
    assert.deepEqual(fallback[1]?.gaps, ['link_outside_root /escape']);
    assert.deepEqual(fallback[2]?.entries, ['/a/inside.txt=in']);
    const forced = await run('openat2', true);
    for (const one of forced) {
      assert.equal(one.acquisition, 'error');
      assert.match(one.error ?? '', /openat2' was requested but is unavailable: koffi could not be loaded/);
      assert.deepEqual(one.entries, []);
    }
    if (!openat2Skip) {
      // Without the simulation the same child uses openat2 and finds the same evidence.
      const normal = await run('auto', false);
      assert.deepEqual(
        normal.map((one) => one.surfaceFs),
        ['openat2', 'openat2', 'openat2'],
      );
      assert.deepEqual(
        normal.map(({ surfaceFs: _, ...rest }) => rest),
        fallback.map(({ surfaceFs: _, ...rest }) => rest),
      );
    }
  });
});

describe('the openat2 seam', { skip: openat2Skip }, () => {
  let dir: string;
  let root: string;
  before(() => {
    dir = tempDir();
    root = path.join(dir, 'ws');
    fs.mkdirSync(root);
    fs.writeFileSync(path.join(dir, 'secret.txt'), 'OUTSIDE');
    buildTree(root, {
      a: { dir: { 'f.txt': 'f', up: { symlink: '../b.txt' }, out: { symlink: '../../secret.txt' } } },
      'b.txt': 'b',
      abs: { symlink: path.join(root, 'b.txt') },
    });
  });
  after(() => removeDir(dir));

  it('the kernel refuses to resolve above the handle (EXDEV), whatever the path says', () => {
    if (!loaded.available) return;
    const rootFd = fs.openSync(root, 'r');
    try {
      for (const outward of ['..', 'a/../..', 'a/out', 'abs']) {
        assert.throws(
          () => loaded.binding.openat2(rootFd, Buffer.from(outward), O_PATH, RESOLVE_BENEATH),
          (error: unknown) => (error as { code?: string }).code === 'EXDEV',
          outward,
        );
      }
      const fd = loaded.binding.openat2(rootFd, Buffer.from('a/up'), O_PATH, RESOLVE_BENEATH);
      assert.equal(fs.fstatSync(fd).ino, fs.statSync(path.join(root, 'b.txt')).ino);
      loaded.binding.close(fd);
    } finally {
      fs.closeSync(rootFd);
    }
  });

  it('retries EAGAIN: a `..` lookup still resolves while another process renames across directories', async () => {
    if (!loaded.available) return;
    // With RESOLVE_BENEATH the kernel answers EAGAIN to a `..` lookup (here the link `up -> ../b.txt`)
    // whenever a cross-directory rename happened anywhere on the machine meanwhile; the binding repeats
    // the call, as openat2(2) advises. Seen before: a busy test run sent such opens to procfs and failed
    // the kernel's own EXDEV refusals.
    const moving = path.join(dir, 'moving');
    fs.mkdirSync(path.join(moving, 'd1'), { recursive: true });
    fs.mkdirSync(path.join(moving, 'd2'));
    fs.writeFileSync(path.join(moving, 'd1', 'x'), '');
    const renamer = spawn(
      process.execPath,
      [
        '-e',
        `const fs = require('node:fs'); const [a, b] = process.argv.slice(1);
         for (;;) { fs.renameSync(a, b); fs.renameSync(b, a); }`,
        path.join(moving, 'd1', 'x'),
        path.join(moving, 'd2', 'x'),
      ],
      { stdio: 'ignore' },
    );
    const rootFd = fs.openSync(root, 'r');
    try {
      // Control: the bare system call, without the binding's retry, meets EAGAIN under this renamer
      // (so the loop below would see failures if the binding did not repeat the call).
      const koffi = createRequire(import.meta.url)('koffi') as {
        load(path: null): { func(signature: string): (...args: unknown[]) => unknown };
        errno(): number;
      };
      const syscall = koffi
        .load(null)
        .func('long syscall(long nr, int dirfd, const uint8_t *path, void *how, size_t size)');
      const how = Buffer.alloc(24);
      how.writeBigUInt64LE(BigInt(O_PATH), 0);
      how.writeBigUInt64LE(BigInt(RESOLVE_BENEATH), 16);
      const name = Buffer.from('a/up\0');
      const SYS_OPENAT2 = 437;
      let eagain = 0;
      const until = Date.now() + 20_000;
      while (eagain === 0 && Date.now() < until) {
        for (let i = 0; i < 1000; i++) {
          const fd = Number(syscall(SYS_OPENAT2, rootFd, name, how, 24));
          if (fd >= 0) fs.closeSync(fd);
          else if (koffi.errno() === 11) eagain++;
        }
        await new Promise((resolve) => setImmediate(resolve));
      }
      assert.ok(eagain > 0, 'the renamer never made the bare system call answer EAGAIN');
      let failures = 0;
      // An eighth in `npm test`, all in surface-fs-choice.full-samples.heavy.test.ts: the renamer spins a
      // core for as long as this loop runs.
      for (let i = 0; i < sampleSize(20_000); i++) {
        try {
          loaded.binding.close(loaded.binding.openat2(rootFd, Buffer.from('a/up'), O_PATH, RESOLVE_BENEATH));
        } catch {
          failures++;
        }
      }
      assert.equal(failures, 0);
    } finally {
      renamer.kill('SIGKILL');
      fs.closeSync(rootFd);
    }
  });

  it('proves placement only for handles the kernel resolved beneath the root; refusals go through procfs', () => {
    if (!loaded.available) return;
    const seam = openat2SurfaceFs(loaded.binding);
    const rootFd = seam.openRoot(root);
    const a = seam.openDirectoryAt(rootFd, Buffer.from('a'));
    try {
      const plain = seam.openPathAt(a, Buffer.from('f.txt'));
      // `up` resolves through "..", which a rename anywhere on the machine can make the kernel answer
      // EAGAIN; the binding repeats the call (the EAGAIN test above), so it is still proven here.
      const up = seam.openPathAt(a, Buffer.from('up'));
      // An outside link: openat2 refuses (EXDEV), procfs opens it O_PATH and readlink places it outside.
      const out = seam.openPathAt(a, Buffer.from('out'));
      // An absolute link back inside: refused by the kernel (absolute), still inside by procfs's check.
      const abs = seam.openPathAt(rootFd, Buffer.from('abs'));
      assert.deepEqual(
        [plain, up, out, abs].map((fd) => seam.provenInside(fd)),
        [true, true, false, false],
      );
      assert.equal(seam.handlePath(out).toString(), path.join(dir, 'secret.txt'));
      assert.equal(seam.handlePath(abs).toString(), path.join(root, 'b.txt'));
      for (const fd of [plain, up, out, abs]) seam.close(fd);
      assert.equal(seam.provenInside(plain), false, 'a closed handle is forgotten (fd numbers are reused)');
    } finally {
      seam.close(a);
      seam.close(rootFd);
    }
  });

  it('exports unlinkat and mkdirat relative to a directory handle (for confined removal)', () => {
    if (!loaded.available) return;
    const { binding } = loaded;
    const rootFd = fs.openSync(root, 'r');
    try {
      binding.mkdirat(rootFd, Buffer.from('made'), 0o755);
      assert.ok(fs.statSync(path.join(root, 'made')).isDirectory());
      binding.unlinkat(rootFd, Buffer.from('made'), AT_REMOVEDIR);
      assert.equal(fs.existsSync(path.join(root, 'made')), false);
      fs.symlinkSync(path.join(dir, 'secret.txt'), path.join(root, 'link'));
      binding.unlinkat(rootFd, Buffer.from('link'), 0);
      assert.equal(
        fs.readFileSync(path.join(dir, 'secret.txt'), 'utf8'),
        'OUTSIDE',
        'the link, not its target',
      );
      assert.throws(
        () => binding.unlinkat(rootFd, Buffer.from('missing'), 0),
        (error: unknown) => (error as { code?: string }).code === 'ENOENT',
      );
    } finally {
      fs.closeSync(rootFd);
    }
  });
});

function runNodeArgs(args: readonly string[], rest: readonly string[]) {
  // runNode takes a script; node flags go first, so pass them as the "script" and its arguments.
  const [first, ...others] = args;
  return runNode(first as string, [...others, ...rest], { timeoutMs: 30_000 });
}
