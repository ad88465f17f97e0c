import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, it } from 'node:test';
import { recordingFs } from '../support/recording-fs.js';
import { describeEachSurfaceFs } from '../support/surface-fs-variants.js';
import { acquireDirect, removeDir, tempDir } from '../support/trees.js';

/**
 * The attack (acquire-sync.ts, rootNamedHere), mounted for real: a root given as `/proc/<pid>/root/…` of a
 * process in another mount namespace. There, the root's directory is a fresh tmpfs holding an absolute
 * symlink to `<root>/host.txt`; here, the same path is the host's directory holding a secret. The kernel
 * names the root handle by the other namespace's path, which is the host directory's path string; the
 * link is resolved here, to the host's secret, whose path starts with that string. Without the check that
 * the root's path names the held directory here, the secret is read and reported as inside (it was, in
 * review: a TRUE verdict on the host's file). Needs root (unshare -m), as the rest of the heavy lane has.
 */
describeEachSurfaceFs('a root in another mount namespace', (variant) => {
  let dir: string;
  let nsRoot: string;
  let child: ChildProcess;
  before(async () => {
    dir = tempDir('witness-root-ns-');
    nsRoot = path.join(fs.realpathSync(dir), 'ns-root');
    fs.mkdirSync(nsRoot);
    fs.writeFileSync(path.join(nsRoot, 'host.txt'), 'HOST SECRET outside the namespace root');
    const script = [
      `mount -t tmpfs none '${nsRoot}'`,
      `ln -s '${nsRoot}/host.txt' '${nsRoot}/leak.txt'`,
      `echo inside > '${nsRoot}/inner.txt'`,
      'echo ready',
      'exec sleep 120',
    ].join(' && ');
    child = spawn('unshare', ['-m', '--propagation', 'private', 'sh', '-c', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const [line] = (await once(child.stdout as NodeJS.ReadableStream, 'data')) as [Buffer];
    assert.equal(line.toString('utf8').trim(), 'ready', 'the namespace was set up');
  });
  after(() => {
    child.kill('SIGKILL');
    removeDir(dir);
  });

  for (const uri of ['/leak.txt', '/inner.txt']) {
    it(`reads nothing at ${uri}: the root's path names another directory here`, () => {
      const root = `/proc/${child.pid}/root${nsRoot}`;
      // The namespace really differs: through the magic link the root holds the link, here it does not.
      assert.ok(fs.lstatSync(path.join(root, 'leak.txt')).isSymbolicLink());
      assert.equal(fs.existsSync(path.join(nsRoot, 'leak.txt')), false);
      const { fs: seam, recording } = recordingFs({}, variant.fs);
      const result = acquireDirect(root, uri, 'exact', {}, seam);
      assert.equal(result.acquisition, 'partial');
      assert.deepEqual(result.entries, []);
      assert.deepEqual(
        result.gaps.map((gap) => gap.reason),
        ['confinement_unverified'],
      );
      assert.equal(recording.bytesRead, 0);
      assert.doesNotMatch(JSON.stringify(result), /HOST SECRET/);
      assert.deepEqual([...recording.openFds], []);
    });
  }
});

/**
 * The same attack where the other namespace holds the very same directory at the very same path (a
 * container given the workspace at its own path), so the root's path names the held directory here too:
 * only a mount differs. Below the root, this (judge's) namespace mounts a tmpfs holding a secret that the
 * agent's namespace does not have; the agent plants an absolute link to it. Resolved here, the link reaches
 * the secret, whose path starts with the root's: without comparing mount ids, it was read (review,
 * on both seams). The judge runs in a namespace of its own (`unshare -m`), so nothing is mounted on the host.
 */
it('a root in another namespace at the same path, with a mount only here, gives nothing from that mount', async () => {
  const dir = tempDir('witness-root-ns-same-');
  try {
    const support = new URL('../support/', import.meta.url).href;
    const judge = path.join(dir, 'judge.mjs');
    fs.writeFileSync(
      judge,
      `import fs from 'node:fs';
import path from 'node:path';
import { spawn, execFileSync } from 'node:child_process';
import { once } from 'node:events';
const { acquireDirect } = await import(${JSON.stringify(`${support}trees.js`)});
const { SURFACE_FS_VARIANTS } = await import(${JSON.stringify(`${support}surface-fs-variants.js`)});
const ws = path.join(${JSON.stringify(fs.realpathSync(dir))}, 'ws');
fs.mkdirSync(path.join(ws, 'hostonly'), { recursive: true });
const agent = spawn('unshare', ['-m', '--propagation', 'private', 'sh', '-c',
  "ln -s '" + ws + "/hostonly/secret.txt' '" + ws + "/out.txt' && echo ready && exec sleep 120"],
  { stdio: ['ignore', 'pipe', 'inherit'] });
await once(agent.stdout, 'data');
execFileSync('mount', ['-t', 'tmpfs', 'none', path.join(ws, 'hostonly')]);
fs.writeFileSync(path.join(ws, 'hostonly', 'secret.txt'), 'HOST SECRET only in the judge namespace');
const root = '/proc/' + agent.pid + '/root' + ws;
const views = [fs.readdirSync(path.join(root, 'hostonly')), fs.readdirSync(path.join(ws, 'hostonly'))];
const results = SURFACE_FS_VARIANTS.map((v) => [v.name, acquireDirect(root, '/out.txt', 'exact', {}, v.fs)]);
agent.kill('SIGKILL');
execFileSync('umount', [path.join(ws, 'hostonly')]);
process.stdout.write(JSON.stringify({ views, results }));
`,
    );
    const child = spawn('unshare', ['-m', '--propagation', 'private', process.execPath, judge], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
    });
    const [status] = (await once(child, 'exit')) as [number];
    assert.equal(status, 0);
    const { views, results } = JSON.parse(out) as {
      views: [string[], string[]];
      results: [string, { acquisition: string; entries: unknown[]; gaps: { reason: string }[] }][];
    };
    // The mount really differs: the agent's view below the root is empty, the judge's holds the secret.
    assert.deepEqual(views, [[], ['secret.txt']]);
    assert.equal(results.length, 2);
    for (const [name, result] of results) {
      assert.doesNotMatch(JSON.stringify(result), /HOST SECRET/, name);
      assert.deepEqual(result.entries, [], name);
      assert.equal(result.acquisition, 'partial', name);
      assert.deepEqual(
        result.gaps.map((gap) => gap.reason),
        ['confinement_unverified'],
        name,
      );
    }
  } finally {
    removeDir(dir);
  }
});
