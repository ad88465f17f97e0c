import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { buildTree, mkfifo, removeDir, tempDir } from './trees.js';

/**
 * A hostile workspace, built fresh for each test run (SPEC §5.1, issue 3). The root is `<base>/ws`; next to
 * it live what an attacker would like Witness to read or touch: `<base>/outside` (a secret, a directory of
 * names, a FIFO with a blocked writer) and `<base>/ws2`, a sibling whose name extends the root's.
 */

export const OUTSIDE_SECRET = 'OUTSIDE SECRET: must never be read';
export const SIBLING_SECRET = 'SIBLING SECRET: /ws2 is not inside /ws';
export const INSIDE_TEXT = 'inside';

/** A name that is not UTF-8 (latin-1 "é" then 0xff) and a real file named U+FFFD, which it must not become. */
export const NON_UTF8_NAME = Buffer.from([0xe9, 0xff, 0x2e, 0x74, 0x78, 0x74]);
export const REPLACEMENT_NAME = '\ufffd\ufffd.txt';

export interface AdversarialWorkspace {
  base: string;
  root: string;
  outside: string;
  /** A link to the root, to give the root through a symlink. */
  rootLink: string;
  /** Whether a character device could be created (needs CAP_MKNOD). */
  hasDevice: boolean;
  /** Writers blocked on opening a FIFO for writing; one unblocks only if someone opens it to read. */
  fifoWriters: FifoWriter[];
  dispose(): Promise<void>;
}

export interface FifoWriter {
  fifo: string;
  child: ChildProcess;
  /** True once the writer's open returned: someone opened the FIFO for reading. */
  unblocked: () => boolean;
}

export async function buildAdversarialWorkspace(): Promise<AdversarialWorkspace> {
  const base = tempDir('witness-adv-');
  const root = path.join(base, 'ws');
  const outside = path.join(base, 'outside');
  fs.mkdirSync(root);
  fs.mkdirSync(outside);
  fs.mkdirSync(path.join(base, 'ws2'));
  buildTree(outside, { 'secret.txt': OUTSIDE_SECRET, dir: { dir: { 'leak.txt': OUTSIDE_SECRET } } });
  buildTree(path.join(base, 'ws2'), { 'secret.txt': SIBLING_SECRET });
  mkfifo(path.join(outside, 'fifo'));
  buildTree(root, {
    data: { dir: { 'inner.txt': INSIDE_TEXT } },
    links: {
      dir: {
        abs: { symlink: path.join(outside, 'secret.txt') },
        rel: { symlink: '../../outside/secret.txt' },
        chain1: { symlink: 'chain2' },
        chain2: { symlink: 'chain3' },
        chain3: { symlink: '../../outside/secret.txt' },
        loop1: { symlink: 'loop2' },
        loop2: { symlink: 'loop1' },
        self: { symlink: 'self' },
        'proc-root': { symlink: `/proc/self/root${path.join(outside, 'secret.txt')}` },
        'proc-exe': { symlink: '/proc/self/exe' },
        'proc-cwd': { symlink: '/proc/self/cwd' },
        'proc-fd-dir': { symlink: '/proc/self/fd' },
        back: { symlink: path.join(root, 'data', 'inner.txt') },
        'to-root': { symlink: root },
        sibling: { symlink: path.join(base, 'ws2', 'secret.txt') },
        'sibling-rel': { symlink: '../../ws2/secret.txt' },
        dangling: { symlink: 'nothing-here' },
        'dir-inside': { symlink: '../data' },
        'dir-outside': { symlink: path.join(outside, 'dir') },
        'dev-zero': { symlink: '/dev/zero' },
        'outside-fifo': { symlink: path.join(outside, 'fifo') },
        'slash-dir': { symlink: `${path.join(outside, 'dir')}/` },
        'slash-file': { symlink: '../data/inner.txt/' },
        'dot-dir': { symlink: '../data/.' },
        'dir-rel-outside': { symlink: '../../outside/dir' },
        'dir-chain': { symlink: 'dir-inside' },
        'loop-dir': { symlink: '.' },
      },
    },
    special: { dir: { fifo: { fifo: true }, 'fifo-writer': { fifo: true } } },
    hard: { dir: { 'inner-hard.txt': { hardlink: 'data/inner.txt' } } },
    names: { dir: { [REPLACEMENT_NAME]: 'the real U+FFFD file', 'plain.txt': 'plain' } },
  });
  fs.writeFileSync(
    Buffer.concat([Buffer.from(path.join(root, 'names')), Buffer.from('/'), NON_UTF8_NAME]),
    'latin-1 named',
  );
  const rootLink = path.join(base, 'root-link');
  fs.symlinkSync(root, rootLink);

  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(path.join(root, 'special', 'socket'), resolve));
  const hasDevice = spawnSync('mknod', [path.join(root, 'special', 'null'), 'c', '1', '3']).status === 0;

  const fifoWriters = [
    startFifoWriter(path.join(outside, 'fifo')),
    startFifoWriter(path.join(root, 'special', 'fifo-writer')),
  ];
  return {
    base,
    root,
    outside,
    rootLink,
    hasDevice,
    fifoWriters,
    async dispose() {
      for (const writer of fifoWriters) writer.child.kill('SIGKILL');
      await new Promise<void>((resolve) => server.close(() => resolve()));
      removeDir(base);
    },
  };
}

/** A shell that blocks opening `fifo` for writing, and says so on stdout if the open ever returns. */
function startFifoWriter(fifo: string): FifoWriter {
  const child = spawn('sh', ['-c', 'exec 3>"$0"; echo unblocked', fifo], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let unblocked = false;
  child.stdout?.on('data', () => {
    unblocked = true;
  });
  child.on('exit', () => {
    unblocked = unblocked || child.signalCode !== 'SIGKILL';
  });
  return { fifo, child, unblocked: () => unblocked };
}
