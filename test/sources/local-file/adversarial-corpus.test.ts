import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { CoverageGap, Observation, SurfaceEntry } from '../../../src/models/observation.js';
import { nodeSurfaceFs, type SurfaceFs } from '../../../src/sources/confined-fs/surface-fs.js';
import { LocalFileSurfaceSource } from '../../../src/sources/local-file-source.js';
import {
  type AdversarialWorkspace,
  buildAdversarialWorkspace,
  INSIDE_TEXT,
  OUTSIDE_SECRET,
  REPLACEMENT_NAME,
  SIBLING_SECRET,
} from '../support/adversarial-tree.js';
import { recordingFs } from '../support/recording-fs.js';
import { describeEachSurfaceFs } from '../support/surface-fs-variants.js';
import {
  acquireDirect,
  buildTree,
  expectedObservation,
  removeDir,
  tempDir,
  textEntry,
} from '../support/trees.js';
import { describeUnprivilegedReader } from '../support/unprivileged-reader-suite.js';

/**
 * The adversarial corpus (SPEC §5.1, issue 3): every case is an attack on the confined read, and every
 * expected observation is written out in full. A test here fails if Witness reads, lists or opens with
 * read intent anything outside the root, or reports a hostile object as anything but a named gap.
 */

const OUTSIDE = 'the link resolves outside the root; nothing was read';
const outside = (uri: string): CoverageGap => ({ reason: 'link_outside_root', uri, detail: OUTSIDE });
const failed = (uri: string, code: string): CoverageGap => ({
  reason: 'read_failed',
  uri,
  detail: `open failed (${code})`,
});
const notAFile = (uri: string, kind: string): CoverageGap => ({ reason: 'not_a_file', uri, detail: kind });
const dangling = (uri: string): CoverageGap => ({
  reason: 'dangling_link',
  uri,
  detail: 'the symbolic link points at nothing',
});
/** A link to a directory with an absolute target: RESOLVE_BENEATH refuses it, so it is not descended. */
const absoluteNotFollowed = (uri: string, target: string): CoverageGap => ({
  reason: 'link_not_followed',
  uri,
  detail: `${uri} is an absolute symbolic link (-> ${target}); only a link that resolves beneath the root is followed`,
});
/** A link to a directory whose relative target climbs above the root. */
const escapesRoot = (uri: string, linkUri: string, target: string): CoverageGap => ({
  reason: 'link_outside_root',
  uri,
  detail: `${linkUri} -> ${target} resolves outside the root; it was not followed`,
});

describeEachSurfaceFs('adversarial corpus', (variant) => {
  let ws: AdversarialWorkspace;
  let source: LocalFileSurfaceSource;
  const observe = (uri: string, match: 'exact' | 'glob' = 'exact') =>
    source.acquire({ scorableType: 'surface', uri, match });
  const expectObservation = (
    actual: Observation,
    expected: { uri: string; match?: 'exact' | 'glob'; entries?: SurfaceEntry[]; gaps?: CoverageGap[] },
  ) => {
    const gaps = expected.gaps ?? [];
    assert.deepEqual(
      actual,
      expectedObservation(actual, {
        root: ws.root,
        uri: expected.uri,
        match: expected.match ?? 'exact',
        acquisition: gaps.length === 0 ? 'complete' : 'partial',
        entries: expected.entries ?? [],
        gaps,
      }),
    );
    assert.equal(actual.metadata.surfaceFs, variant.name, 'the forced implementation was used');
    // Whatever else happened, no byte of an outside secret reached the evidence.
    const text = JSON.stringify(actual);
    assert.ok(
      !text.includes(OUTSIDE_SECRET) && !text.includes(SIBLING_SECRET),
      'outside content in evidence',
    );
  };

  before(async () => {
    ws = await buildAdversarialWorkspace();
    source = new LocalFileSurfaceSource({ root: ws.root, surfaceFs: variant.name });
  });
  after(async () => {
    await source.close();
    await ws.dispose();
  });

  describe('symbolic links', () => {
    const exactCases: [string, CoverageGap[] | 'inside'][] = [
      ['abs', [outside('/links/abs')]],
      ['rel', [outside('/links/rel')]],
      ['chain1', [outside('/links/chain1')]],
      ['loop1', [failed('/links/loop1', 'ELOOP')]],
      ['self', [failed('/links/self', 'ELOOP')]],
      ['proc-root', [outside('/links/proc-root')]],
      ['proc-exe', [outside('/links/proc-exe')]],
      ['proc-cwd', [outside('/links/proc-cwd')]],
      ['proc-fd-dir', [outside('/links/proc-fd-dir')]],
      ['back', 'inside'],
      ['to-root', [outside('/links/to-root')]],
      ['sibling', [outside('/links/sibling')]],
      ['sibling-rel', [outside('/links/sibling-rel')]],
      ['dangling', [dangling('/links/dangling')]],
      ['dir-inside', [notAFile('/links/dir-inside', 'a directory')]],
      ['dir-outside', [outside('/links/dir-outside')]],
      ['dev-zero', [outside('/links/dev-zero')]],
      ['outside-fifo', [outside('/links/outside-fifo')]],
      ['slash-dir', [outside('/links/slash-dir')]],
      ['slash-file', [failed('/links/slash-file', 'ENOTDIR')]],
      ['dot-dir', [notAFile('/links/dot-dir', 'a directory')]],
      ['dir-rel-outside', [outside('/links/dir-rel-outside')]],
      ['dir-chain', [notAFile('/links/dir-chain', 'a directory')]],
      ['loop-dir', [notAFile('/links/loop-dir', 'a directory')]],
    ];
    for (const [name, expected] of exactCases) {
      it(`exact /links/${name}: ${expected === 'inside' ? 'read, it points back inside' : expected.map((gap) => gap.reason).join(', ')}`, async () => {
        const uri = `/links/${name}`;
        const observation = await observe(uri);
        if (expected === 'inside') {
          const via = `${uri} -> ${path.join(ws.root, 'data', 'inner.txt')}`;
          expectObservation(observation, { uri, entries: [textEntry(uri, INSIDE_TEXT, via)] });
        } else expectObservation(observation, { uri, gaps: expected });
      });
    }
    const backVia = () => `/links/back -> ${path.join(ws.root, 'data', 'inner.txt')}`;

    it('one-level glob: links to files are candidates, links to directories are not (nothing beneath could match)', async () => {
      const observation = await observe('/links/*', 'glob');
      expectObservation(observation, {
        uri: '/links/*',
        match: 'glob',
        entries: [textEntry('/links/back', INSIDE_TEXT, backVia())],
        gaps: [
          outside('/links/abs'),
          outside('/links/chain1'),
          outside('/links/chain2'),
          outside('/links/chain3'),
          dangling('/links/dangling'),
          outside('/links/dev-zero'),
          failed('/links/loop1', 'ELOOP'),
          failed('/links/loop2', 'ELOOP'),
          outside('/links/outside-fifo'),
          outside('/links/proc-exe'),
          outside('/links/proc-root'),
          outside('/links/rel'),
          failed('/links/self', 'ELOOP'),
          outside('/links/sibling'),
          outside('/links/sibling-rel'),
          failed('/links/slash-file', 'ENOTDIR'),
        ],
      });
    });

    it('recursive glob: a link to a directory beneath the root is descended once; one leaving it is a gap', async () => {
      const { fs: seam, recording } = recordingFs({}, variant.fs);
      const result = acquireDirect(ws.root, '/links/**', 'glob', {}, seam);
      // dir-chain -> dir-inside -> ../data is met first (names sort bytewise): /data is listed once, under
      // it; dir-inside and dot-dir lead to the same directory for the same pattern, loop-dir to /links
      // itself, so none is listed again.
      assert.deepEqual(result.entries, [
        textEntry('/links/back', INSIDE_TEXT, backVia()),
        textEntry(
          '/links/dir-chain/inner.txt',
          INSIDE_TEXT,
          '/links/dir-chain -> dir-inside, /links/dir-inside -> ../data',
        ),
      ]);
      assert.deepEqual(
        result.gaps.filter(
          (gap) => gap.reason === 'link_not_followed' || gap.uri === '/links/dir-rel-outside',
        ),
        [
          absoluteNotFollowed('/links/dir-outside', path.join(ws.outside, 'dir')),
          escapesRoot('/links/dir-rel-outside', '/links/dir-rel-outside', '../../outside/dir'),
          absoluteNotFollowed('/links/proc-cwd', '/proc/self/cwd'),
          absoluteNotFollowed('/links/proc-fd-dir', '/proc/self/fd'),
          absoluteNotFollowed('/links/slash-dir', `${path.join(ws.outside, 'dir')}/`),
          absoluteNotFollowed('/links/to-root', ws.root),
        ],
      );
      assert.deepEqual(recording.listed, [path.join(ws.root, 'links'), path.join(ws.root, 'data')]);
      // Read handles were opened on inside files only, and only inside bytes were read.
      assert.deepEqual(recording.opened, [
        path.join(ws.root, 'data', 'inner.txt'),
        path.join(ws.root, 'data', 'inner.txt'),
      ]);
      assert.deepEqual([...recording.bytesByPath.keys()], [path.join(ws.root, 'data', 'inner.txt')]);
    });

    it('an exact locator through a symlinked parent is read where the link leads beneath the root', async () => {
      for (const [name, via] of [
        ['dir-inside', '/links/dir-inside -> ../data'],
        ['dot-dir', '/links/dot-dir -> ../data/.'],
        ['dir-chain', '/links/dir-chain -> dir-inside, /links/dir-inside -> ../data'],
      ] as const) {
        const uri = `/links/${name}/inner.txt`;
        expectObservation(await observe(uri), { uri, entries: [textEntry(uri, INSIDE_TEXT, via)] });
      }
    });

    it('an exact locator through a parent link that leaves the root is a gap, and nothing outside is opened', async () => {
      const cases: [string, CoverageGap][] = [
        ['dir-outside', absoluteNotFollowed('/links/dir-outside', path.join(ws.outside, 'dir'))],
        ['proc-cwd', absoluteNotFollowed('/links/proc-cwd', '/proc/self/cwd')],
        ['to-root', absoluteNotFollowed('/links/to-root', ws.root)],
        [
          'dir-rel-outside',
          escapesRoot('/links/dir-rel-outside', '/links/dir-rel-outside', '../../outside/dir'),
        ],
      ];
      for (const [name, gap] of cases) {
        const uri = `/links/${name}/leak.txt`;
        const { fs: seam, recording } = recordingFs({}, variant.fs);
        const result = acquireDirect(ws.root, uri, 'exact', {}, seam);
        assert.deepEqual(result.entries, []);
        assert.deepEqual(result.gaps, [{ ...gap, uri }]);
        assert.deepEqual(recording.opened, []);
        assert.deepEqual(recording.listed, []);
      }
    });

    it('a root given through a symlink confines to the real root: a link to the real root is still outside', async () => {
      const linked = new LocalFileSurfaceSource({ root: ws.rootLink, surfaceFs: variant.name });
      try {
        const observation = await linked.acquire({
          scorableType: 'surface',
          uri: '/links/to-root',
          match: 'exact',
        });
        assert.equal(observation.metadata.resolvedRoot, fs.realpathSync(ws.root));
        assert.deepEqual(observation.payload.coverage.gaps, [outside('/links/to-root')]);
        const back = await linked.acquire({ scorableType: 'surface', uri: '/links/back', match: 'exact' });
        assert.deepEqual(back.payload.entries, [textEntry('/links/back', INSIDE_TEXT, backVia())]);
      } finally {
        await linked.close();
      }
    });
  });

  describe('special files', () => {
    it('FIFOs, with or without a writer, are not_a_file and never block', async () => {
      const started = performance.now();
      for (const name of ['fifo', 'fifo-writer']) {
        const uri = `/special/${name}`;
        expectObservation(await observe(uri), { uri, gaps: [notAFile(uri, 'a FIFO')] });
      }
      assert.ok(performance.now() - started < 5000);
    });

    it('a unix socket is not_a_file', async () => {
      expectObservation(await observe('/special/socket'), {
        uri: '/special/socket',
        gaps: [notAFile('/special/socket', 'a socket')],
      });
    });

    it('a character device is not_a_file and is never opened for reading', async (t) => {
      if (!ws.hasDevice) {
        t.skip('mknod is not permitted here');
        return;
      }
      const { fs: seam, recording } = recordingFs({}, variant.fs);
      const result = acquireDirect(ws.root, '/special/null', 'exact', {}, seam);
      assert.deepEqual(result.gaps, [notAFile('/special/null', 'a character device')]);
      assert.deepEqual(recording.opened, []);
    });

    it('a glob over special files reads none of them', async () => {
      const observation = await observe('/special/*', 'glob');
      expectObservation(observation, {
        uri: '/special/*',
        match: 'glob',
        gaps: [
          notAFile('/special/fifo', 'a FIFO'),
          notAFile('/special/fifo-writer', 'a FIFO'),
          ...(ws.hasDevice ? [notAFile('/special/null', 'a character device')] : []),
          notAFile('/special/socket', 'a socket'),
        ],
      });
    });

    it('no FIFO writer, inside or outside the root, was ever unblocked by an acquisition', async () => {
      await observe('/**', 'glob');
      await observe('/links/outside-fifo');
      await new Promise((resolve) => setTimeout(resolve, 200));
      for (const writer of ws.fifoWriters) {
        assert.equal(writer.child.exitCode, null, `${writer.fifo}: the writer exited`);
        assert.equal(writer.unblocked(), false, `${writer.fifo}: the writer was unblocked`);
      }
    });
  });

  describe('names and links inside', () => {
    it('a hard link inside the root is a genuine entry', async () => {
      expectObservation(await observe('/hard/inner-hard.txt'), {
        uri: '/hard/inner-hard.txt',
        entries: [textEntry('/hard/inner-hard.txt', INSIDE_TEXT)],
      });
    });

    it('a name that is not UTF-8 is reported as unrepresentable_name, never mistaken for another', async () => {
      const observation = await observe('/names/*', 'glob');
      expectObservation(observation, {
        uri: '/names/*',
        match: 'glob',
        entries: [
          textEntry('/names/plain.txt', 'plain'),
          textEntry(`/names/${REPLACEMENT_NAME}`, 'the real U+FFFD file'),
        ],
        gaps: [
          {
            reason: 'unrepresentable_name',
            uri: '/names',
            detail: 'a name in this directory is not UTF-8: \\xe9\\xff.txt',
          },
        ],
      });
      // A pattern that cannot match the name, even read leniently, leaves no gap.
      expectObservation(await observe('/names/*.md', 'glob'), { uri: '/names/*.md', match: 'glob' });
      // Under `**` the name is still reported: a listed file that is not a candidate is skipped before its
      // child record is built (a memory saving), but never a name that is not UTF-8.
      const below = await observe('/names/**/*.md', 'glob');
      assert.deepEqual(
        below.payload.coverage.gaps.map((gap) => [gap.reason, gap.uri]),
        [['unrepresentable_name', '/names']],
      );
    });

    it('a path deeper than PATH_MAX is confinement_unverified, never a silent pass', async () => {
      const segment = 'd'.repeat(250);
      let at = path.join(ws.root, 'deep');
      fs.mkdirSync(at);
      const fd = fs.openSync(at, 'r');
      try {
        // mkdir relative to a handle: the full path is too long for the kernel to accept by name.
        let dirFd = fd;
        const opened: number[] = [];
        for (let i = 0; i < 20; i++) {
          fs.mkdirSync(`/proc/self/fd/${dirFd}/${segment}`);
          dirFd = fs.openSync(`/proc/self/fd/${dirFd}/${segment}`, 'r');
          opened.push(dirFd);
        }
        fs.writeFileSync(`/proc/self/fd/${dirFd}/f.txt`, 'deep');
        for (const o of opened) fs.closeSync(o);
      } finally {
        fs.closeSync(fd);
      }
      at = `/deep/${Array(20).fill(segment).join('/')}/f.txt`;
      const exact = await observe(at);
      expectObservation(exact, {
        uri: at,
        gaps: [
          {
            reason: 'confinement_unverified',
            uri: at,
            detail: "the handle's path could not be read (ENAMETOOLONG)",
          },
        ],
      });
      const glob = await observe('/deep/**', 'glob');
      assert.equal(glob.acquisition, 'partial');
      assert.deepEqual(glob.payload.entries, []);
      assert.deepEqual(glob.payload.coverage.reasons, ['confinement_unverified']);
    });

    it('an absurd modification time (year 10000, kept by tmpfs) is clamped, not an unserializable record', async (t) => {
      if (!fs.existsSync('/dev/shm')) {
        t.skip('no tmpfs at /dev/shm');
        return;
      }
      const shm = fs.mkdtempSync('/dev/shm/witness-');
      try {
        fs.writeFileSync(path.join(shm, 'future.txt'), 'x');
        const year10000 = Date.parse('+010000-01-01T00:00:00Z') / 1000;
        fs.utimesSync(path.join(shm, 'future.txt'), year10000, year10000);
        if (fs.statSync(path.join(shm, 'future.txt')).mtimeMs < year10000 * 1000) {
          t.skip('this tmpfs clamps times itself');
          return;
        }
        const tmpfs = new LocalFileSurfaceSource({ root: shm, surfaceFs: variant.name });
        const observation = await tmpfs.acquire({
          scorableType: 'surface',
          uri: '/future.txt',
          match: 'exact',
        });
        await tmpfs.close();
        assert.equal(observation.acquisition, 'complete');
        assert.equal(observation.payload.entries[0]?.modifiedAt, '9999-12-31T23:59:59.999Z');
      } finally {
        fs.rmSync(shm, { recursive: true, force: true });
      }
    });
  });

  it('the whole workspace, recursively: only inside bytes are read and only inside names listed', () => {
    const { fs: seam, recording } = recordingFs({}, variant.fs);
    const result = acquireDirect(ws.root, '/**', 'glob', {}, seam);
    assert.equal(result.acquisition, 'partial');
    const rootPrefix = `${ws.root}/`;
    for (const listed of recording.listed)
      assert.ok(listed === ws.root || listed.startsWith(rootPrefix), listed);
    for (const name of recording.listedNames) assert.ok(name.startsWith(rootPrefix), name);
    for (const opened of recording.opened) assert.ok(opened.startsWith(rootPrefix), opened);
    for (const where of recording.bytesByPath.keys()) assert.ok(where.startsWith(rootPrefix), where);
    assert.ok(result.entries.some((entry) => entry.uri === '/data/inner.txt'));
    assert.ok(!JSON.stringify(result).includes(OUTSIDE_SECRET));
  });
});

describeEachSurfaceFs('adversarial corpus: races on the walk', (variant) => {
  it('a directory replaced by a file mid-walk is a gap, not a silently complete subtree', () => {
    const root = tempDir();
    try {
      buildTree(root, { data: { dir: { 'a.txt': 'a', sub: { dir: { 'b.txt': 'b' } } } } });
      const { fs: seam } = recordingFs(
        {
          before: (op, args) => {
            if (op !== 'openDirectoryAt' || String(args[1]) !== 'sub') return;
            fs.rmSync(path.join(root, 'data', 'sub'), { recursive: true });
            fs.writeFileSync(path.join(root, 'data', 'sub'), 'now a file');
          },
        },
        variant.fs,
      );
      const result = acquireDirect(root, '/data/**', 'glob', {}, seam);
      assert.deepEqual(result.entries, [textEntry('/data/a.txt', 'a')]);
      assert.deepEqual(result.gaps, [
        {
          reason: 'listing_failed',
          uri: '/data/sub',
          detail: 'replaced by a non-directory while walking; not listed',
        },
      ]);
      assert.equal(result.acquisition, 'partial');
    } finally {
      removeDir(root);
    }
  });

  it('a directory replaced by a symlink mid-walk is not descended (link_not_followed)', () => {
    const root = tempDir();
    try {
      buildTree(root, {
        data: { dir: { sub: { dir: { 'b.txt': 'b' } } } },
        elsewhere: { dir: { 'x.txt': 'x' } },
      });
      const { fs: seam, recording } = recordingFs(
        {
          before: (op, args) => {
            if (op !== 'openDirectoryAt' || String(args[1]) !== 'sub') return;
            fs.rmSync(path.join(root, 'data', 'sub'), { recursive: true });
            fs.symlinkSync(path.join(root, 'elsewhere'), path.join(root, 'data', 'sub'));
          },
        },
        variant.fs,
      );
      const result = acquireDirect(root, '/data/**', 'glob', {}, seam);
      assert.deepEqual(result.gaps, [
        {
          reason: 'link_not_followed',
          uri: '/data/sub',
          detail: 'replaced by a symbolic link while walking; not descended',
        },
      ]);
      assert.deepEqual(recording.listed, [path.join(root, 'data')]);
    } finally {
      removeDir(root);
    }
  });

  // The agent renames a directory the walk has already opened (and, on the openat2 seam, that the kernel
  // proved beneath the root at open time) to a directory of its own outside the workspace, just before
  // it is listed. The placement check after listing must discard that listing on both seams; on the
  // openat2 seam it is the only check left between the open and the listing.
  const movedOutAtListing = (base: string, seam: SurfaceFs) =>
    recordingFs(
      {
        before: (op, args) => {
          if (op !== 'openListing') return;
          const where = nodeSurfaceFs.handlePath(args[0] as number).toString();
          if (where === path.join(base, 'ws', 'data', 'sub')) {
            fs.renameSync(where, path.join(base, 'outside', 'sub'));
          }
        },
      },
      seam,
    ).fs;

  it('a directory renamed outside the root after it was opened is not trusted: its listing is discarded', () => {
    const base = tempDir();
    try {
      buildTree(base, {
        ws: { dir: { data: { dir: { 'a.txt': 'a', sub: { dir: { 'b.txt': 'b' } } } } } },
        outside: { dir: {} },
      });
      const result = acquireDirect(
        path.join(base, 'ws'),
        '/data/**',
        'glob',
        {},
        movedOutAtListing(base, variant.fs),
      );
      assert.deepEqual(result.entries, [textEntry('/data/a.txt', 'a')]);
      assert.deepEqual(result.gaps, [
        {
          reason: 'link_outside_root',
          uri: '/data/sub',
          detail: 'the directory is no longer inside the root; it was not listed',
        },
      ]);
    } finally {
      removeDir(base);
    }
  });

  it('control: with a placement check that believes every handle, the same move reads the outside file', () => {
    const base = tempDir();
    try {
      buildTree(base, {
        ws: { dir: { data: { dir: { 'a.txt': 'a', sub: { dir: { 'b.txt': 'b' } } } } } },
        outside: { dir: {} },
      });
      const believing: SurfaceFs = {
        ...variant.fs,
        provenInside: () => false,
        handlePath: (fd) => {
          const real = nodeSurfaceFs.handlePath(fd);
          return real.toString().startsWith(path.join(base, 'ws'))
            ? real
            : Buffer.from(path.join(base, 'ws', 'data', 'trusted'));
        },
      };
      const result = acquireDirect(
        path.join(base, 'ws'),
        '/data/**',
        'glob',
        {},
        movedOutAtListing(base, believing),
      );
      assert.deepEqual(result.gaps, []);
      // Children are opened relative to the moved handle (on the openat2 seam, the open beneath the root
      // by path finds nothing and falls back to the handle): the outside file is read as if inside.
      assert.deepEqual(result.entries, [textEntry('/data/a.txt', 'a'), textEntry('/data/sub/b.txt', 'b')]);
    } finally {
      removeDir(base);
    }
  });
});

// What an unprivileged reader is denied: one case here, all of them in
// adversarial-corpus-unprivileged.heavy.test.ts (each acquisition is a node process run as uid 65534).
describeUnprivilegedReader({ cases: 'sample' });
