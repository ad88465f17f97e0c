import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Deterministic benchmark trees, generated once and cached under a base directory (by default
 * `os.tmpdir()/witness-bench`). A tree is complete only when its manifest (`<name>.json`, beside the tree,
 * never inside it where a glob would list it) exists: an interrupted generation is discarded and redone.
 */

export interface MainTree {
  root: string;
  files: number;
  /** Directories below the root (the root itself not counted). */
  directories: number;
  bytes: number;
  /** A file three or more directories deep, for exact acquisitions. */
  deepFileUri: string;
  /** The static prefix of row 2: its directory count (itself included) and its `x*.md` files. */
  prefix: { uri: string; directories: number; matches: number };
}

export interface BigFiles {
  root: string;
  names: string[];
  bytes: number;
}

export interface EntriesTree {
  root: string;
  /** Every directory entry below the root: directories and files. */
  entries: number;
}

/** Bumped when a generator changes, so a stale cached tree is never reused. */
const MAIN_TREE_VERSION = 2;
const BIG_FILES_VERSION = 1;
const ENTRIES_TREE_VERSION = 1;
const TOP_DIRECTORIES = 10;
const BRANCHING = 6;

/**
 * A small seeded PRNG (mulberry32): the same seed gives the same tree on every machine (and the same
 * generated cases to the tests that use it).
 */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function cached<T>(base: string, name: string, build: (dir: string) => T): T {
  const manifestPath = path.join(base, `${name}.json`);
  const root = path.join(base, name);
  if (fs.existsSync(manifestPath) && fs.existsSync(root)) {
    return JSON.parse(fs.readFileSync(manifestPath, 'utf8')) as T;
  }
  fs.mkdirSync(base, { recursive: true });
  fs.rmSync(root, { recursive: true, force: true });
  const building = `${root}.building-${process.pid}`;
  fs.rmSync(building, { recursive: true, force: true });
  fs.mkdirSync(building);
  const manifest = build(building);
  fs.renameSync(building, root);
  fs.writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

const WORDS =
  'witness agent surface scorable locator observation coverage gap hook config token secret deploy build'.split(
    ' ',
  );

/** 64 KiB of ASCII text; each file takes a slice of it after its own header line. */
function textBlock(): Buffer {
  const random = prng(7);
  let text = '';
  while (text.length < 65_536) {
    text += `${WORDS[Math.floor(random() * WORDS.length)]}${random() < 0.1 ? '\n' : ' '}`;
  }
  return Buffer.from(text.slice(0, 65_536));
}

/** The file's name; `kind` (0–19, drawn at random) picks one of four shapes: `x<n>.md` one time in 20. */
function fileName(index: number, kind: number): string {
  switch (kind) {
    case 0:
      return `x${index}.md`;
    case 1:
      return `readme-${index}.md`;
    case 2:
      return `index-${index}.js`;
    default:
      return `f${index}.txt`;
  }
}

/**
 * `files` small text files (64 B – 2 KiB) spread evenly over `directories` directories, under ten top
 * directories `d0`–`d9`, each a breadth-first tree with six children per directory (so about four levels
 * deep at 500 directories per top directory). One file in twenty is named `x<n>.md`.
 */
export function ensureMainTree(base: string, files: number, directories: number): MainTree {
  if (directories < TOP_DIRECTORIES)
    throw new Error(`the main tree needs at least ${TOP_DIRECTORIES} directories`);
  const name = `main-${files}f-${directories}d-v${MAIN_TREE_VERSION}`;
  const manifest = cached(base, name, (dir) => {
    const dirs: string[] = [];
    for (let top = 0; top < TOP_DIRECTORIES; top++) {
      const count = Math.floor(directories / TOP_DIRECTORIES) + (top < directories % TOP_DIRECTORIES ? 1 : 0);
      const queue = [`d${top}`];
      const own: string[] = [];
      while (own.length < count) {
        const parent = queue.shift() as string;
        own.push(parent);
        for (let child = 0; child < BRANCHING; child++) queue.push(`${parent}/n${child}`);
      }
      dirs.push(...own);
    }
    for (const d of dirs) fs.mkdirSync(path.join(dir, d));
    const block = textBlock();
    const random = prng(42);
    const deepest = dirs.filter((d) => d.startsWith('d0')).at(-1) as string;
    let deepFileUri = '';
    let bytes = 0;
    let matches = 0;
    for (let index = 0; index < files; index++) {
      const parent = dirs[index % dirs.length] as string;
      const name = fileName(index, Math.floor(random() * 20));
      const size = 64 + Math.floor(random() * 1984);
      const offset = Math.floor(random() * (block.length - size));
      const header = Buffer.from(`file ${index}\n`);
      const body = Buffer.concat([header, block.subarray(offset, offset + size - header.length)]);
      fs.writeFileSync(path.join(dir, parent, name), body);
      bytes += body.length;
      if ((parent === 'd1' || parent.startsWith('d1/')) && name.startsWith('x')) matches++;
      if (parent === deepest && deepFileUri === '') deepFileUri = `/${parent}/${name}`;
    }
    return {
      root: '',
      files,
      directories: dirs.length,
      bytes,
      deepFileUri,
      prefix: {
        uri: '/d1/**/x*.md',
        directories: dirs.filter((d) => d === 'd1' || d.startsWith('d1/')).length,
        matches,
      },
    } satisfies MainTree;
  });
  return { ...manifest, root: path.join(base, name) };
}

/** Files of the given sizes filled with deterministic pseudo-random bytes (not text, not compressible). */
export function ensureBigFiles(base: string, sizesMiB: readonly number[]): BigFiles {
  const name = `big-${sizesMiB.join('-')}-v${BIG_FILES_VERSION}`;
  const manifest = cached(base, name, (dir) => {
    const block = Buffer.alloc(1 << 20);
    for (let i = 0; i < block.length / 32; i++) {
      createHash('sha256')
        .update(`block ${i}`)
        .digest()
        .copy(block, i * 32);
    }
    const names: string[] = [];
    let bytes = 0;
    for (const size of sizesMiB) {
      const file = `big-${size}.bin`;
      const fd = fs.openSync(path.join(dir, file), 'w');
      try {
        for (let mib = 0; mib < size; mib++) {
          block.writeUInt32LE(mib, 0);
          fs.writeSync(fd, block);
        }
      } finally {
        fs.closeSync(fd);
      }
      names.push(file);
      bytes += size << 20;
    }
    return { root: '', names, bytes } satisfies BigFiles;
  });
  return { ...manifest, root: path.join(base, name) };
}

/** `directories` directories of `filesPerDirectory` empty files each: many entries, almost no data. */
export function ensureEntriesTree(base: string, directories: number, filesPerDirectory: number): EntriesTree {
  const name = `entries-${directories}x${filesPerDirectory}-v${ENTRIES_TREE_VERSION}`;
  const manifest = cached(base, name, (dir) => {
    for (let d = 0; d < directories; d++) {
      const sub = path.join(dir, `e${String(d).padStart(5, '0')}`);
      fs.mkdirSync(sub);
      for (let f = 0; f < filesPerDirectory; f++) {
        fs.closeSync(fs.openSync(path.join(sub, `f${String(f).padStart(6, '0')}`), 'w'));
      }
    }
    return { root: '', entries: directories * (filesPerDirectory + 1) } satisfies EntriesTree;
  });
  return { ...manifest, root: path.join(base, name) };
}
