import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import type { Node } from 'typescript';
import { parsedSource } from './support/parsed-source.js';
import { sourceFiles } from './support/source-files.js';
import ts from './support/typescript.js';

/**
 * A failure a user can cause (a bad option, campaign, file or machine) is a typed `WitnessError` with a
 * code (src/errors.ts): the CLI prints its message and exits 2. A plain `Error` becomes exit 1,
 * "unexpected failure", with a stack — right for a broken invariant, wrong for a user's mistake. So every
 * `throw new Error(…)` in src/ says that it is internal: its message says "a bug" or "unreachable", or a
 * comment just above it (on the throw or on the `if` that guards it) says "internal". Reading the
 * TypeScript syntax tree, a `throw` inside a string (the viewer's browser script) is not counted.
 */

function commentsBefore(text: string, node: Node): string {
  return (ts.getLeadingCommentRanges(text, node.getFullStart()) ?? [])
    .map((range) => text.slice(range.pos, range.end))
    .join('\n');
}

/** `file:line` of each `throw new Error(…)` not marked as internal. */
function unmarkedPlainThrows(file: string, text = readFileSync(file, 'utf8')): string[] {
  const source = parsedSource(file, text);
  const found: string[] = [];
  const visit = (node: Node): void => {
    if (
      ts.isThrowStatement(node) &&
      ts.isNewExpression(node.expression) &&
      ts.isIdentifier(node.expression.expression) &&
      node.expression.expression.text === 'Error'
    ) {
      const message = node.expression.getText(source);
      const guard = ts.isIfStatement(node.parent)
        ? node.parent
        : ts.isBlock(node.parent) && ts.isIfStatement(node.parent.parent)
          ? node.parent.parent
          : undefined;
      const comments = [
        commentsBefore(text, node),
        guard === undefined ? '' : commentsBefore(text, guard),
      ].join('\n');
      if (!/\ba bug\b|\bunreachable\b/i.test(message) && !/\binternal\b/i.test(comments)) {
        found.push(`${file}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('plain errors in src', () => {
  it('each plain `throw new Error` is marked internal: a user-caused failure is a typed error with a code', () => {
    // Only files that say `new Error` are parsed (a few dozen of several hundred).
    const unmarked = sourceFiles('src').flatMap((file) => {
      const text = readFileSync(file, 'utf8');
      return /\bnew Error\b/.test(text) ? unmarkedPlainThrows(file, text) : [];
    });
    assert.deepEqual(
      unmarked,
      [],
      'a failure a user can cause throws a WitnessError subclass (src/errors.ts; exit 2, its message naming ' +
        'the problem and the fix); a broken invariant says so: "a bug" in its message, or a comment ' +
        'saying "internal" above it',
    );
  });

  it('finds an unmarked plain throw, and accepts each way of marking one', () => {
    const scan = (code: string) => unmarkedPlainThrows('probe.ts', code);
    assert.deepEqual(scan('const a = 1;\nif (a) throw new Error("no port");'), ['probe.ts:2']);
    assert.deepEqual(scan('if (a) {\n  throw new Error(`x`);\n}'), ['probe.ts:2']);
    assert.deepEqual(scan('throw new Error("entry " + i + " twice: a bug");'), []);
    assert.deepEqual(scan('throw new Error("unreachable: returned above");'), []);
    assert.deepEqual(scan('// Internal: checked by the caller.\nthrow new Error("no module");'), []);
    assert.deepEqual(scan('// internal: caught below\nif (a) throw new Error("not procfs");'), []);
    assert.deepEqual(scan('if (a) {\n  // internal\n  throw new Error("x");\n}'), []);
    assert.deepEqual(scan('throw new InvalidOptionError("a port from 1 to 65535");'), []);
    assert.deepEqual(scan('const script = "if (!ok) throw new Error(1)";'), []);
  });
});
