import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { isMap, isNode, isScalar, LineCounter, parseDocument } from 'yaml';
import { InvalidCampaignError } from '../errors.js';
import { describeIssues } from '../models/record.js';
import { fillPlaceholders } from '../text/placeholders.js';
import { type Campaign, CampaignSchema } from './campaign.js';
import { expandCampaignMatrix } from './library/matrix.js';

/**
 * Reads a campaign file (YAML) and validates it. Every problem is reported as `file:line:column: field:
 * message`, pointing at the offending value, at a key that is not known (with the known key it is nearest
 * to), and for a missing key at its misspelling or else at the object that lacks it.
 * Relative paths (the workspace template, a command or MCP server given as a path) are resolved against
 * the campaign file's directory, and `{campaignDir}` in a command's or server's arguments is replaced by
 * it, so a campaign runs the same from any working directory.
 */
export async function loadCampaignFile(path: string): Promise<Campaign> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new InvalidCampaignError(
      `${path}: cannot read the campaign file (${(error as NodeJS.ErrnoException).code})`,
    );
  }
  return resolvePaths(parseCampaign(text, path), dirname(resolve(path)));
}

/** Parses and validates campaign YAML; `name` labels the messages (a file path). */
export function parseCampaign(text: string, name: string): Campaign {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    // One mistake yields a cascade of parser errors (a Markdown file gave eight at 1:1): the first is the
    // cause, the rest follow from it.
    const [first] = doc.errors;
    const at = first === undefined ? { line: 1, col: 1 } : lineCounter.linePos(first.pos[0]);
    const more =
      doc.errors.length > 1 ? ` (${doc.errors.length - 1} further parser errors follow from it)` : '';
    const issues = [`${name}:${at.line}:${at.col}: ${first?.message.split('\n')[0] ?? 'not YAML'}${more}`];
    throw new InvalidCampaignError(`invalid campaign:\n${issues.join('\n')}`, issues);
  }
  // A `matrix:` is expanded into ordinary attacks first (src/attacks/library/matrix.ts).
  const expanded = expandCampaignMatrix(doc.toJS());
  const result = expanded.success ? CampaignSchema.safeParse(expanded.data) : expanded;
  if (result.success) return result.data;
  const lines = describeIssues(result.error);
  // A misspelt key is two issues: the key that is not known and the required key it was meant to be. Both
  // point at the misspelt key, where the fix is typed, not at the object that holds it.
  const misspelt = new Map<string, string>();
  for (const issue of result.error.issues) {
    if (issue.code !== 'unrecognized_keys') continue;
    for (const key of issue.keys) {
      const meant = nearestKey(key, issue.path);
      if (meant !== undefined) misspelt.set(pathKey([...issue.path, meant]), key);
    }
  }
  const issues = result.error.issues.map((issue, i) => {
    // A problem in a generated attack is located at the `matrix:` it came from.
    const generated =
      expanded.success && issue.path[0] === 'attacks' && Number(issue.path[1]) >= expanded.handWritten;
    const missing = issue.code !== 'unrecognized_keys' && !doc.hasIn(issue.path as (string | number)[]);
    const typed = missing ? misspelt.get(pathKey(issue.path)) : undefined;
    const stray = issue.code === 'unrecognized_keys' ? issue.keys[0] : typed;
    const parent = issue.code === 'unrecognized_keys' ? issue.path : issue.path.slice(0, -1);
    const { line, col } = generated
      ? positionOf(doc, lineCounter, ['matrix'])
      : ((stray === undefined ? undefined : keyPositionOf(doc, lineCounter, parent, stray)) ??
        positionOf(doc, lineCounter, issue.path));
    const hint =
      issue.code === 'unrecognized_keys'
        ? didYouMean(issue.keys, issue.path)
        : typed === undefined
          ? ''
          : ` (given as ${JSON.stringify(typed)}?)`;
    return `${name}:${line}:${col}: ${lines[i]}${hint}`;
  });
  throw new InvalidCampaignError(`invalid campaign:\n${issues.join('\n')}`, issues);
}

function positionOf(
  doc: ReturnType<typeof parseDocument>,
  lineCounter: LineCounter,
  path: readonly PropertyKey[],
): { line: number; col: number } {
  for (let depth = path.length; depth >= 0; depth--) {
    const node = depth === 0 ? doc.contents : doc.getIn(path.slice(0, depth) as (string | number)[], true);
    if (isNode(node) && node.range !== undefined && node.range !== null) {
      return lineCounter.linePos(node.range[0]);
    }
  }
  return { line: 1, col: 1 };
}

/** Where the key `key` of the mapping at `path` is written, or undefined when it is not there. */
function keyPositionOf(
  doc: ReturnType<typeof parseDocument>,
  lineCounter: LineCounter,
  path: readonly PropertyKey[],
  key: string,
): { line: number; col: number } | undefined {
  const node = path.length === 0 ? doc.contents : doc.getIn(path as (string | number)[], true);
  if (!isMap(node)) return undefined;
  for (const pair of node.items) {
    const written = isScalar(pair.key) ? pair.key.value : pair.key;
    if (String(written) === key && isNode(pair.key) && pair.key.range)
      return lineCounter.linePos(pair.key.range[0]);
  }
  return undefined;
}

function pathKey(path: readonly PropertyKey[]): string {
  return JSON.stringify(path.map(String));
}

function resolvePaths(campaign: Campaign, base: string): Campaign {
  const local = (path: string) => (isAbsolute(path) ? path : resolve(base, path));
  const asPath = (command: string) => (command.includes('/') ? local(command) : command);
  const out = structuredClone(campaign);
  if (out.workspace.template !== undefined) out.workspace.template = local(out.workspace.template);
  const args = (list: string[] | undefined) =>
    list?.map((arg) => fillPlaceholders(arg, { campaignDir: base }));
  if (out.target.kind === 'command') {
    out.target.command = asPath(out.target.command);
    out.target.args = args(out.target.args);
  }
  if (out.target.kind === 'agent' && 'preset' in out.target) {
    if (out.target.command !== undefined) out.target.command = asPath(out.target.command);
    out.target.args = args(out.target.args);
  }
  if (out.target.kind === 'agent' && 'toolbox' in out.target && out.target.toolbox.kind === 'mcp') {
    out.target.toolbox.command = asPath(out.target.toolbox.command);
    out.target.toolbox.args = args(out.target.toolbox.args);
  }
  if (out.target.kind === 'mcp') {
    out.target.server.command = asPath(out.target.server.command);
    out.target.server.args = args(out.target.server.args);
  }
  return out;
}

/**
 * "did you mean" for misspelled keys: the known keys at the issue's place in the campaign schema, nearest
 * by edit distance (at most 2, or a third of the word).
 */
function didYouMean(keys: readonly string[], path: readonly PropertyKey[]): string {
  const hints = keys.flatMap((key) => {
    const meant = nearestKey(key, path);
    if (meant === undefined) return [];
    return [keys.length === 1 ? meant : `${meant} for "${key}"`];
  });
  return hints.length === 0 ? '' : ` (did you mean ${hints.join(', ')}?)`;
}

/** The known key at `path` nearest to `key` by edit distance (at most 2, or a third of the word). */
function nearestKey(key: string, path: readonly PropertyKey[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const name of knownKeysAt(CampaignSchema, path)) {
    const distance = editDistance(key.toLowerCase(), name.toLowerCase());
    if (best === undefined || distance < best.distance) best = { name, distance };
  }
  const allowed = Math.max(2, Math.floor(key.length / 3));
  return best === undefined || best.distance > allowed ? undefined : best.name;
}

/** The keys an object schema accepts at `path` (through defaults, optionals, pipes, arrays and unions). */
function knownKeysAt(schema: unknown, path: readonly PropertyKey[]): string[] {
  const def = (schema as { _zod?: { def?: Record<string, unknown> } } | undefined)?._zod?.def;
  if (def === undefined) return [];
  switch (def.type) {
    case 'default':
    case 'optional':
    case 'nullable':
    case 'prefault':
    case 'readonly':
      return knownKeysAt(def.innerType, path);
    case 'pipe':
      return knownKeysAt(def.in, path);
    case 'union':
      return [...new Set((def.options as unknown[]).flatMap((option) => knownKeysAt(option, path)))];
    case 'array':
      return path.length === 0 ? [] : knownKeysAt(def.element, path.slice(1));
    case 'object': {
      const shape = def.shape as Record<string, unknown>;
      if (path.length === 0) return Object.keys(shape);
      const [head, ...rest] = path;
      return typeof head === 'string' && head in shape ? knownKeysAt(shape[head], rest) : [];
    }
    default:
      return [];
  }
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
