import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { NON_TEXT_PREFIX_BYTES, type Observation } from '../../../src/models/observation.js';
import { runNode, writeChildScript } from '../support/child-process.js';
import { removeDir, tempDir } from '../support/trees.js';

/**
 * Resource bounds under attack (issue 3): a tree of 1,000,000 empty entries, 200,000 names in one
 * directory, a 10 GB sparse file and /dev/zero through a link. Each acquisition runs in its own child
 * process, which reports its observation and its peak memory (VmHWM), so the numbers are the source's own.
 *
 * The large trees are built once by a small C program and cached under the system temp dir
 * (witness-cache-*); delete that directory to rebuild them.
 */

const MAKE_ENTRIES = fileURLToPath(
  new URL('../../../../test/sources/fixtures/make-entries.c', import.meta.url),
);
const CACHE = path.join(os.tmpdir(), 'witness-cache-v1');
/** Peak resident memory any acquisition below may reach, in MiB (Node and its worker alone use ~60). */
const PEAK_LIMIT_MIB = 400;

const MEASURE = `
import fs from 'node:fs';
import { LocalFileSurfaceSource } from '{{SOURCE}}';
const [root, uri, match, limits] = process.argv.slice(2);
const source = new LocalFileSurfaceSource({ root, ...JSON.parse(limits) });
const started = performance.now();
const observation = await source.acquire({ scorableType: 'surface', uri, match });
const elapsedMs = Math.round(performance.now() - started);
const status = fs.readFileSync('/proc/self/status', 'utf8');
const kib = (key) => Number(new RegExp(key + ':\\\\s+(\\\\d+)').exec(status)?.[1] ?? NaN);
process.stdout.write(JSON.stringify({ observation, elapsedMs, peakMiB: Math.round(kib('VmHWM') / 1024) }));
`;

interface Measured {
  observation: Observation;
  elapsedMs: number;
  peakMiB: number;
}

let scripts: string;

async function measure(
  root: string,
  uri: string,
  match: 'exact' | 'glob',
  limits: object = {},
): Promise<Measured> {
  const script = writeChildScript(scripts, 'measure.mjs', MEASURE);
  const result = await runNode(script, [root, uri, match, JSON.stringify(limits)], { timeoutMs: 120_000 });
  assert.equal(result.code, 0, result.stderr);
  const measured = JSON.parse(result.stdout) as Measured;
  const { stats } = measured.observation.metadata as { stats: object };
  console.log(
    `resource bound ${uri} (${match}) ${JSON.stringify(limits)}: ${measured.observation.acquisition}, ` +
      `${measured.observation.payload.coverage.reasons.join(',') || 'no gaps'}, ${measured.elapsedMs} ms, ` +
      `peak ${measured.peakMiB} MiB, stats ${JSON.stringify(stats)}`,
  );
  assert.ok(measured.peakMiB < PEAK_LIMIT_MIB, `peak memory ${measured.peakMiB} MiB`);
  return measured;
}

/** Builds `<CACHE>/<name>` with the C helper unless a previous run completed it. */
function cachedTree(name: string, dirs: number, files: number): string | undefined {
  const root = path.join(CACHE, name);
  const done = path.join(CACHE, `${name}.done`);
  if (fs.existsSync(done)) return root;
  fs.mkdirSync(CACHE, { recursive: true, mode: 0o755 });
  const binary = path.join(CACHE, 'make-entries');
  if (spawnSync('cc', ['-O2', '-o', binary, MAKE_ENTRIES], { stdio: 'inherit' }).status !== 0)
    return undefined;
  fs.rmSync(root, { recursive: true, force: true });
  const built = spawnSync(binary, [root, String(dirs), String(files)], { stdio: 'inherit' });
  if (built.status !== 0) return undefined;
  fs.writeFileSync(done, '');
  return root;
}

const stats = (observation: Observation) =>
  observation.metadata.stats as {
    directoriesListed: number;
    entriesExamined: number;
    candidates: number;
    filesRead: number;
    bytesRead: number;
  };

describe('resource bounds under attack', () => {
  let work: string;
  before(() => {
    work = tempDir('witness-bounds-');
    scripts = work;
  });
  after(() => removeDir(work));

  it('a tree of 1,000,000 empty entries: the listing budget stops the walk promptly', async (t) => {
    const root = cachedTree('million', 1000, 999);
    if (root === undefined) {
      t.skip('no C compiler (cc) to build the tree');
      return;
    }
    // 1,000 directories of 999 files: 1,000 + 999,000 = 1,000,000 entries. Nothing matches *.nomatch,
    // so only maxListedEntries can end the walk.
    const bounded = await measure(root, '/**/*.nomatch', 'glob');
    assert.equal(bounded.observation.acquisition, 'partial');
    assert.deepEqual(bounded.observation.payload.coverage.reasons, ['listing_limit_exceeded']);
    assert.equal(stats(bounded.observation).entriesExamined, 100_001);
    assert.ok(bounded.elapsedMs < 20_000);
    // The candidate budget also stops a walk that matches everything.
    const files = await measure(root, '/**', 'glob');
    assert.deepEqual(files.observation.payload.coverage.reasons, ['file_limit_exceeded']);
    assert.equal(files.observation.payload.entries.length, 1000);
    assert.equal(stats(files.observation).candidates, 1001);
    // With the budget raised past the tree, the whole million is walked with bounded memory.
    const all = await measure(root, '/**/*.nomatch', 'glob', { maxListedEntries: 2_000_000 });
    assert.equal(all.observation.acquisition, 'complete');
    assert.equal(stats(all.observation).entriesExamined, 1_000_000);
    assert.equal(stats(all.observation).directoriesListed, 1001);
  });

  it('200,000 names in one directory: the listing is discarded at the budget, or held within memory bounds', async (t) => {
    const root = cachedTree('wide', 1, 200_000);
    if (root === undefined) {
      t.skip('no C compiler (cc) to build the tree');
      return;
    }
    const bounded = await measure(root, '/d0000/*.nomatch', 'glob');
    assert.deepEqual(bounded.observation.payload.coverage.gaps, [
      {
        reason: 'listing_limit_exceeded',
        uri: '/d0000',
        detail: 'more than 100000 directory entries examined',
      },
    ]);
    const whole = await measure(root, '/d0000/f1999*', 'glob', { maxListedEntries: 300_000 });
    assert.equal(whole.observation.acquisition, 'complete');
    assert.equal(whole.observation.payload.entries.length, 100); // f199900 … f199999
    assert.equal(stats(whole.observation).entriesExamined, 200_000);
  });

  it('a 10 GB sparse file: reads stop at maxReadBytes, the size is still reported', async () => {
    const root = path.join(work, 'sparse');
    fs.mkdirSync(root);
    const fd = fs.openSync(path.join(root, 'huge.bin'), 'w');
    fs.ftruncateSync(fd, 10 * 1024 ** 3);
    fs.closeSync(fd);
    const measured = await measure(root, '/huge.bin', 'exact');
    const [entry] = measured.observation.payload.entries;
    assert.equal(entry?.sizeBytes, 10 * 1024 ** 3);
    assert.equal(entry?.sha256, null);
    // NUL bytes are not text (SPEC §13): the entry keeps a bounded prefix of them, whatever
    // maxContentBytes allows, and says it is not text.
    assert.equal(entry?.content?.length, NON_TEXT_PREFIX_BYTES);
    assert.equal(entry?.notText, true);
    assert.equal(entry?.contentTruncated, true);
    assert.equal(stats(measured.observation).bytesRead, 16_000_000);
    assert.deepEqual(measured.observation.payload.coverage.reasons, ['read_limit_exceeded']);
    assert.ok(measured.elapsedMs < 10_000);
  });

  it('/dev/zero through a link, or as a device node inside the root: not one byte read', async () => {
    const root = path.join(work, 'zero');
    fs.mkdirSync(root);
    fs.symlinkSync('/dev/zero', path.join(root, 'zero-link'));
    const hasNode = spawnSync('mknod', [path.join(root, 'zero-node'), 'c', '1', '5']).status === 0;
    const linked = await measure(root, '/zero-link', 'exact');
    assert.deepEqual(linked.observation.payload.coverage.reasons, ['link_outside_root']);
    assert.equal(stats(linked.observation).bytesRead, 0);
    if (hasNode) {
      const node = await measure(root, '/zero-node', 'exact');
      assert.deepEqual(node.observation.payload.coverage.gaps, [
        { reason: 'not_a_file', uri: '/zero-node', detail: 'a character device' },
      ]);
      assert.equal(stats(node.observation).bytesRead, 0);
    }
    const glob = await measure(root, '/**', 'glob');
    assert.equal(stats(glob.observation).bytesRead, 0);
  });
});
