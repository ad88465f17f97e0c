import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { sourceFiles } from './support/source-files.js';
import ts from './support/typescript.js';

/**
 * The import graph of src/ (every `import`, `export … from` and `import()`, type-only ones included, read
 * from the TypeScript sources; tests run from the repository root) keeps the shape the README's Layout
 * line draws: no cycle, no import from a lower layer to a higher one, and the confined file-system module
 * reached from outside src/sources only through its face.
 */

/**
 * Lowest first. A module may import its own directory and any directory of a lower layer. The README's
 * line groups attacks, targets and sandbox together; their imports already run one way
 * (sandbox ← targets ← attacks), so they are kept apart here and that order holds too.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['errors.ts', 'text', 'net'],
  ['models'],
  ['matching'],
  ['verdicts'],
  ['sources'],
  ['scorers'],
  ['memory'],
  ['network'],
  ['sandbox'],
  ['targets'],
  ['attacks'],
  ['render'],
  ['model-server', 'queue'],
  ['view'],
  ['cli'],
  ['entry', 'index.ts'],
];

/** Upward imports that another lane is removing; each names why it is still here. */
const KNOWN_UPWARD: ReadonlyMap<string, string> = new Map([]);

/**
 * Files inside a folder of src/sources that code outside src/sources may import besides the faces
 * (`src/sources/*.ts`): the acquisition thread pool is loaded on its own, before anything else, so that
 * its threads start while the command's own modules load.
 */
const SOURCES_INTERNALS_ALLOWED = new Set(['src/sources/local-file/acquisition-pool.ts']);

type Graph = ReadonlyMap<string, readonly string[]>;

/** Every file of src/ with the src/ files it imports (repository-relative paths). */
function importGraph(): Graph {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles('src')) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = new Set<string>();
    for (const { fileName } of importedFiles) {
      if (!fileName.startsWith('.')) continue;
      targets.add(path.join(path.dirname(file), fileName).replace(/\.js$/, '.ts'));
    }
    graph.set(file, [...targets].sort());
  }
  return graph;
}

/** The strongly connected components with more than one file, or a file importing itself (Tarjan). */
export function findCycles(graph: Graph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let next = 0;
  const visit = (node: string) => {
    index.set(node, next);
    low.set(node, next);
    next++;
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node) as number, low.get(target) as number));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node) as number, index.get(target) as number));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop() as string;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || (graph.get(node) ?? []).includes(node)) cycles.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return cycles;
}

function layerOf(file: string): number {
  const top = file.split('/')[1] as string;
  const layer = LAYERS.findIndex((names) => names.includes(top));
  if (layer < 0) throw new Error(`${file}: src/${top} is in no layer of this test; add it to LAYERS`);
  return layer;
}

/** Imports from a layer to a higher one, or between two directories of one layer. */
export function upwardImports(graph: Graph): string[] {
  const out: string[] = [];
  for (const [file, targets] of graph) {
    for (const target of targets) {
      if (file.split('/')[1] === target.split('/')[1]) continue;
      if (layerOf(target) >= layerOf(file)) out.push(`${file} -> ${target}`);
    }
  }
  return out;
}

describe('the import graph of src/', () => {
  const graph = importGraph();

  it('has no cycle', () => {
    assert.deepEqual(findCycles(graph), []);
  });

  it('imports only downward between layers (models ← … ← cli), but for the known exceptions', () => {
    const upward = upwardImports(graph);
    assert.deepEqual(
      upward.filter((edge) => !KNOWN_UPWARD.has(edge)),
      [],
    );
    // An exception that no longer exists is dropped from the list, so the list stays true.
    assert.deepEqual(
      [...KNOWN_UPWARD.keys()].filter((edge) => !upward.includes(edge)),
      [],
    );
  });

  it('keeps the confined file-system primitives free of the acquisition built on them', () => {
    const leaks: string[] = [];
    for (const [file, targets] of graph) {
      if (!file.startsWith('src/sources/confined-fs/')) continue;
      for (const target of targets)
        if (!target.startsWith('src/sources/confined-fs/')) leaks.push(`${file} -> ${target}`);
    }
    assert.deepEqual(leaks, []);
  });

  it('lets the acquisition (local-file/) use the primitives, never the faces built on it', () => {
    const leaks: string[] = [];
    for (const [file, targets] of graph) {
      if (!file.startsWith('src/sources/local-file/')) continue;
      for (const target of targets) {
        if (target.startsWith('src/sources/') && target.split('/').length === 3)
          leaks.push(`${file} -> ${target}`);
      }
    }
    assert.deepEqual(leaks, []);
  });

  it('reaches src/sources from outside only through its faces (src/sources/*.ts)', () => {
    const leaks: string[] = [];
    for (const [file, targets] of graph) {
      if (file.startsWith('src/sources/')) continue;
      for (const target of targets) {
        if (!target.startsWith('src/sources/') || target.split('/').length === 3) continue;
        if (!SOURCES_INTERNALS_ALLOWED.has(target)) leaks.push(`${file} -> ${target}`);
      }
    }
    assert.deepEqual(leaks, []);
  });
});

describe('the import graph checks themselves', () => {
  it('find a cycle of three files and a file that imports itself, and nothing in a chain', () => {
    const graph = new Map([
      ['src/models/a.ts', ['src/models/b.ts']],
      ['src/models/b.ts', ['src/models/c.ts']],
      ['src/models/c.ts', ['src/models/a.ts']],
      ['src/models/d.ts', ['src/models/d.ts']],
      ['src/models/e.ts', ['src/models/a.ts']],
    ]);
    assert.deepEqual(findCycles(graph), [
      ['src/models/a.ts', 'src/models/b.ts', 'src/models/c.ts'],
      ['src/models/d.ts'],
    ]);
  });

  it('find an import from a lower layer to a higher one, and between two directories of one layer', () => {
    const graph = new Map([
      ['src/models/a.ts', ['src/verdicts/b.ts']],
      ['src/verdicts/b.ts', ['src/models/a.ts']],
      ['src/queue/c.ts', ['src/model-server/d.ts']],
    ]);
    assert.deepEqual(upwardImports(graph), [
      'src/models/a.ts -> src/verdicts/b.ts',
      'src/queue/c.ts -> src/model-server/d.ts',
    ]);
  });
});
