import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import type { Node, SignatureDeclaration, SourceFile } from 'typescript';
import { parsedSource } from './support/parsed-source.js';
import { sourceFiles } from './support/source-files.js';
import ts from './support/typescript.js';

/**
 * No function in src/ has a body longer than 80 lines (from its opening brace to its closing one, nested
 * functions included): a longer one is split into named steps, so a reader sees the steps before the
 * detail. Read from the TypeScript syntax tree, so a function inside a string (the viewer's browser script)
 * is not counted. Tests run from the repository root.
 */
const MAX_BODY_LINES = 80;

/**
 * Long functions that are still being split; each names why it is still here. A function that is no
 * longer long must leave this list (the test says so), so the list only shrinks.
 */
const OTHER_LANE = 'in files another change is rewriting now; split once it has landed';
const KNOWN_LONG: ReadonlyMap<string, string> = new Map([
  ['src/sandbox/contained-process.ts startInBwrap', OTHER_LANE],
  ['src/sandbox/sandbox-settings.ts launchInAttempt', OTHER_LANE],
  ['src/sources/local-file/acquire-sync.ts acquireGuarded', OTHER_LANE],
  ['src/sources/local-file/read-lanes.ts sharedLanes', OTHER_LANE],
  ['src/sources/local-file/reserved-read.ts readReserved', OTHER_LANE],
  ['src/sources/local-file/second-reader.ts serveSecondReader', OTHER_LANE],
  ['src/view/view-app.ts createViewApp', OTHER_LANE],
]);

/** The name a reader would look for: the enclosing functions' names, then this one's. */
function nameOf(node: SignatureDeclaration, source: SourceFile): string {
  const own = (fn: Node): string => {
    const declared = (fn as SignatureDeclaration).name;
    if (declared !== undefined) return declared.getText(source);
    const parent = fn.parent;
    if (
      ts.isVariableDeclaration(parent) ||
      ts.isPropertyAssignment(parent) ||
      ts.isPropertyDeclaration(parent)
    )
      return parent.name.getText(source);
    if (ts.isConstructorDeclaration(fn)) return 'constructor';
    return `(anonymous, line ${source.getLineAndCharacterOfPosition(fn.getStart(source)).line + 1})`;
  };
  const names = [own(node)];
  for (let up = node.parent; up !== undefined; up = up.parent) {
    if (ts.isFunctionLike(up)) names.unshift(own(up));
    else if (ts.isClassLike(up) && up.name !== undefined) names.unshift(up.name.text);
  }
  return names.join('/');
}

/** `file name (N lines)` of each function whose body is longer than `max` lines. */
export function longFunctions(file: string, text: string, max = MAX_BODY_LINES): Map<string, number> {
  const found = new Map<string, number>();
  // A file no longer than the limit cannot hold a longer function: it is not parsed.
  if (text.split('\n').length <= max) return found;
  const source = parsedSource(file, text);
  const visit = (node: Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const body = node.body as Node;
      const first = source.getLineAndCharacterOfPosition(body.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(body.end).line;
      const lines = last - first + 1;
      if (lines > max) found.set(`${file} ${nameOf(node, source)}`, lines);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('function length in src', () => {
  const long = new Map<string, number>();
  for (const file of sourceFiles('src'))
    for (const [name, lines] of longFunctions(file, readFileSync(file, 'utf8'))) long.set(name, lines);

  it(`has no function body longer than ${MAX_BODY_LINES} lines, but for the known ones being split`, () => {
    assert.deepEqual(
      [...long].filter(([name]) => !KNOWN_LONG.has(name)).map(([name, lines]) => `${name} (${lines} lines)`),
      [],
    );
  });

  it('lists as known only functions that are still long', () => {
    assert.deepEqual(
      [...KNOWN_LONG.keys()].filter((name) => !long.has(name)),
      [],
    );
  });
});

describe('the function length check itself', () => {
  const lines = (count: number) =>
    Array.from({ length: count }, (_, i) => `  const v${i} = ${i};`).join('\n');

  it('finds declarations, methods, arrows and nested functions longer than the limit, by their names', () => {
    const text = [
      `export function long() {\n${lines(79)}\n}`, // 81 lines with its braces
      `function fits() {\n${lines(78)}\n}`, // 80 lines
      `class Box {\n  method() {\n${lines(79)}\n  }\n}`,
      `const arrow = () => {\n${lines(79)}\n};`,
      `function outer() {\n  const inner = function () {\n${lines(79)}\n  };\n  return inner;\n}`,
    ].join('\n');
    assert.deepEqual(
      [...longFunctions('src/x.ts', text)],
      [
        ['src/x.ts long', 81],
        ['src/x.ts Box/method', 81],
        ['src/x.ts arrow', 81],
        ['src/x.ts outer', 84],
        ['src/x.ts outer/inner', 81],
      ],
    );
  });

  it('does not count a function written inside a string', () => {
    const text = `export const script = \`function inBrowser() {\n${lines(100)}\n}\`;`;
    assert.deepEqual([...longFunctions('src/x.ts', text)], []);
  });
});
