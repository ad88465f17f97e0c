/**
 * Matches one glob segment against one name in time linear in the name (times the pattern's length).
 *
 * Names are chosen by the attacker. The RegExp that the locator parser compiles backtracks: `*a*a*a*b`
 * against a 255-character name of `a`s took 3.5 s, one more `*` takes minutes, and a listing can hold
 * 100,000 such names — an agent could stall every acquisition (and its cancellation, which is only
 * checked between names) by planting a few files. This matcher simulates the pattern as an NFA instead
 * (Thompson's construction), so no name can cost more than |name| × |pattern| steps.
 *
 * This is the one glob segment parser: the locator parser (models/locator.ts) splits a uri into segments
 * and hands each pattern segment here, which validates it (an error is an {@link InvalidLocatorError}
 * naming the uri) and compiles it. `*` any run of characters, `?` one character, `[...]` a class with
 * ranges and `!`/`^` negation (a `]` right after the opening bracket is literal), `{a,b}` alternatives
 * (nestable; `,` and `}` outside braces are literal), everything else literal. Extended globs (`@(a|b)`,
 * `*(x)`, ...) are refused rather than read as literal text, which would silently match nothing and turn
 * into a false "nothing was written". Characters are code points.
 */

import { InvalidLocatorError } from '../errors.js';

type Test = (codePoint: number) => boolean;

/** `*` and `?` never match a `/`: a segment never spans directories. */
const notSlash: Test = (codePoint) => codePoint !== 0x2f;

interface State {
  /** The character this state consumes, or null for a state that only forks (epsilon moves). */
  test: Test | null;
  next: number[];
}

/** `literal`: the code point a literal character's test accepts (absent for `?` and classes). */
type Node =
  | { kind: 'test'; test: Test; literal?: number }
  | { kind: 'star' }
  | { kind: 'alt'; options: Node[][] };

export interface SegmentMatcher {
  matches(name: string): boolean;
  /** How it matches: by string search (a well-formed pattern of literals and stars) or by the NFA simulation. */
  readonly method: 'search' | 'simulation';
}

interface Parser {
  chars: string[];
  i: number;
  /** The uri the segment came from, for error messages. */
  uri: string;
  segment: string;
}

/** Validates and compiles one glob segment of `uri`; throws {@link InvalidLocatorError} naming the fix. */
export function compileSegmentMatcher(segment: string, uri: string = segment): SegmentMatcher {
  const chars = Array.from(segment);
  const parser: Parser = { chars, i: 0, uri, segment };
  const nodes = parseSequence(parser, 0);
  const states: State[] = [{ test: null, next: [] }]; // state 0 accepts
  const start = compileSequence(states, nodes, 0);
  const general = (name: string) => simulate(states, start, name);
  const parts = isWellFormed(segment) ? starParts(nodes) : undefined;
  return parts === undefined
    ? { matches: general, method: 'simulation' }
    : { matches: starMatcher(parts, general), method: 'search' };
}

/** `String.prototype.isWellFormed` (Node ≥ 20; not yet in the compiler's ES2023 lib). */
const isWellFormed = (text: string): boolean =>
  (text as unknown as { isWellFormed(): boolean }).isWellFormed();

/**
 * The literal runs between the stars of a pattern made of literal characters and `*` only (`x*.md` →
 * `x`, `.md`; `*` → two empty runs), or undefined for any other pattern.
 */
function starParts(nodes: readonly Node[]): string[] | undefined {
  const parts: string[] = [''];
  for (const node of nodes) {
    if (node.kind === 'star') parts.push('');
    else if (node.kind === 'test' && node.literal !== undefined) {
      parts[parts.length - 1] += String.fromCodePoint(node.literal);
    } else return undefined;
  }
  return parts;
}

/**
 * The same answer as {@link simulate} for a pattern of literal runs joined by stars, found with string
 * search: the first run must begin the name, the last end it, and each run between must occur, leftmost
 * first, in order, between them (taking the leftmost occurrence never loses a match when only stars lie
 * between runs). Each run is searched once from where the previous one ended: linear in the name times
 * the pattern, like the simulation, at a fraction of its cost: in a listing-bound glob such as
 * `/d1/**\/x*.md` the simulation was a fifth of the walking thread's time.
 *
 * Searching UTF-16 units finds exactly the code-point matches: the runs are well-formed (the segment
 * was checked), so none begins with a low surrogate or ends with a high one, and no match can split a
 * surrogate pair of the name. A name holding `/` goes to the simulation, where no star crosses it.
 */
function starMatcher(
  parts: readonly string[],
  general: (name: string) => boolean,
): (name: string) => boolean {
  const first = parts[0] as string;
  if (parts.length === 1) return (name) => name === first;
  const last = parts[parts.length - 1] as string;
  const middle = parts.slice(1, -1).filter((part) => part.length > 0);
  const fixed = first.length + last.length;
  return (name) => {
    if (name.includes('/')) return general(name);
    if (name.length < fixed || !name.startsWith(first) || !name.endsWith(last)) return false;
    const end = name.length - last.length;
    let at = first.length;
    for (const part of middle) {
      const found = name.indexOf(part, at);
      if (found < 0 || found + part.length > end) return false;
      at = found + part.length;
    }
    return true;
  };
}

function parseSequence(parser: Parser, depth: number): Node[] {
  const { chars } = parser;
  const nodes: Node[] = [];
  while (parser.i < chars.length) {
    const ch = chars[parser.i] as string;
    if (depth > 0 && (ch === ',' || ch === '}')) break;
    parser.i++;
    if (ch === '*') {
      if (nodes[nodes.length - 1]?.kind !== 'star') nodes.push({ kind: 'star' });
    } else if (ch === '?') {
      nodes.push({ kind: 'test', test: notSlash });
    } else if (ch === '[') {
      nodes.push({ kind: 'test', test: parseClass(parser) });
    } else if (ch === '{') {
      const options = [parseSequence(parser, depth + 1)];
      while (chars[parser.i] === ',') {
        parser.i++;
        options.push(parseSequence(parser, depth + 1));
      }
      if (chars[parser.i] !== '}') {
        throw new InvalidLocatorError(
          `glob ${JSON.stringify(parser.uri)} has an unterminated "{"; close it with "}"`,
        );
      }
      parser.i++;
      nodes.push({ kind: 'alt', options });
    } else {
      if (ch === '(' && '@+!*?'.includes(chars[parser.i - 2] ?? '')) throw extendedGlobError(parser.uri);
      const codePoint = ch.codePointAt(0) as number;
      nodes.push({ kind: 'test', test: (c) => c === codePoint, literal: codePoint });
    }
  }
  return nodes;
}

/** Parses a class after its "[" up to and including its "]". */
function parseClass(parser: Parser): Test {
  const { chars } = parser;
  let negated = false;
  if (chars[parser.i] === '!' || chars[parser.i] === '^') {
    negated = true;
    parser.i++;
  }
  const atoms: number[] = [];
  if (chars[parser.i] === ']') atoms.push(chars[parser.i++]?.codePointAt(0) as number);
  while (parser.i < chars.length && chars[parser.i] !== ']')
    atoms.push(chars[parser.i++]?.codePointAt(0) as number);
  if (parser.i >= chars.length) {
    throw new InvalidLocatorError(
      `glob ${JSON.stringify(parser.uri)} has an unterminated "["; close it with "]"`,
    );
  }
  parser.i++; // the closing "]"
  const DASH = 0x2d;
  const ranges: [number, number][] = [];
  for (let k = 0; k < atoms.length; k++) {
    const low = atoms[k] as number;
    if (atoms[k + 1] === DASH && k + 2 < atoms.length) {
      const high = atoms[k + 2] as number;
      if (high < low) {
        throw new InvalidLocatorError(
          `glob ${JSON.stringify(parser.uri)} has an invalid segment ${JSON.stringify(parser.segment)}: the range ${String.fromCodePoint(low)}-${String.fromCodePoint(high)} in a character class is out of order`,
        );
      }
      ranges.push([low, high]);
      k += 2;
    } else ranges.push([low, low]);
  }
  const inClass = (c: number) => ranges.some(([low, high]) => c >= low && c <= high);
  return negated ? (c) => !inClass(c) : inClass;
}

/** Builds states for `nodes` followed by state `next`; returns the entry state. */
function compileSequence(states: State[], nodes: readonly Node[], next: number): number {
  let entry = next;
  for (let k = nodes.length - 1; k >= 0; k--) entry = compileNode(states, nodes[k] as Node, entry);
  return entry;
}

function compileNode(states: State[], node: Node, next: number): number {
  if (node.kind === 'test') return states.push({ test: node.test, next: [next] }) - 1;
  if (node.kind === 'star') {
    const fork = states.push({ test: null, next: [] }) - 1;
    const any = states.push({ test: notSlash, next: [fork] }) - 1;
    (states[fork] as State).next.push(any, next);
    return fork;
  }
  const entries = node.options.map((option) => compileSequence(states, option, next));
  return states.push({ test: null, next: entries }) - 1;
}

function simulate(states: readonly State[], start: number, name: string): boolean {
  const seen = new Int32Array(states.length).fill(-1);
  let generation = 0;
  let current: number[] = [];
  const add = (list: number[], state: number) => {
    const stack = [state];
    while (stack.length > 0) {
      const s = stack.pop() as number;
      if (seen[s] === generation) continue;
      seen[s] = generation;
      const st = states[s] as State;
      if (st.test === null) stack.push(...st.next);
      list.push(s);
    }
  };
  add(current, start);
  for (const ch of name) {
    const codePoint = ch.codePointAt(0) as number;
    generation++;
    const next: number[] = [];
    for (const s of current) {
      const st = states[s] as State;
      if (st.test?.(codePoint)) add(next, st.next[0] as number);
    }
    if (next.length === 0) return false;
    current = next;
  }
  return current.includes(0);
}

/** The refusal of extended glob syntax (see the module comment). */
export function extendedGlobError(uri: string): InvalidLocatorError {
  return new InvalidLocatorError(
    `glob ${JSON.stringify(uri)} uses extended glob syntax, which is not supported (match a literal "(" with "[(]")`,
  );
}
