import type { SourceFile } from 'typescript';
import ts from './typescript.js';

/**
 * The syntax tree of a TypeScript source (parent links set), for the checks that read src/ (function
 * length, plain errors). JSDoc is not parsed: no check reads it (comments are read from the text), and it
 * is a sixth of the parse. The runner keeps these checks in one process (`SAME_PROCESS` in
 * test-support/run-tests.mjs), so TypeScript is loaded, and its parser warmed up, once. The trees are not
 * kept: all of src/ held for the rest of a shard would make every later garbage collection slower.
 */
export function parsedSource(file: string, text: string): SourceFile {
  return ts.createSourceFile(
    file,
    text,
    { languageVersion: ts.ScriptTarget.Latest, jsDocParsingMode: ts.JSDocParsingMode.ParseNone },
    true,
  );
}
