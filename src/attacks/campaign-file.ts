import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { isNode, LineCounter, parseDocument } from 'yaml';
import { InvalidCampaignError } from '../errors.js';
import { describeIssues } from '../models/record.js';
import { type Campaign, CampaignSchema } from './campaign.js';
import { expandCampaignMatrix } from './library/matrix.js';

/**
 * Reads a campaign file (YAML) and validates it. Every problem is reported as `file:line:column: field:
 * message`, pointing at the offending value (or, for a missing key, at the object that lacks it).
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
    const issues = doc.errors.map((error) => {
      const at = error.linePos?.[0];
      return `${name}:${at?.line ?? 1}:${at?.col ?? 1}: ${error.message.split('\n')[0]}`;
    });
    throw new InvalidCampaignError(`invalid campaign:\n${issues.join('\n')}`, issues);
  }
  // A `matrix:` is expanded into ordinary attacks first (src/attacks/library/matrix.ts).
  const expanded = expandCampaignMatrix(doc.toJS());
  const result = expanded.success ? CampaignSchema.safeParse(expanded.data) : expanded;
  if (result.success) return result.data;
  const lines = describeIssues(result.error);
  const issues = result.error.issues.map((issue, i) => {
    // A problem in a generated attack is located at the `matrix:` it came from.
    const generated =
      expanded.success && issue.path[0] === 'attacks' && Number(issue.path[1]) >= expanded.handWritten;
    const { line, col } = positionOf(doc, lineCounter, generated ? ['matrix'] : issue.path);
    return `${name}:${line}:${col}: ${lines[i]}`;
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

function resolvePaths(campaign: Campaign, base: string): Campaign {
  const local = (path: string) => (isAbsolute(path) ? path : resolve(base, path));
  const asPath = (command: string) => (command.includes('/') ? local(command) : command);
  const out = structuredClone(campaign);
  if (out.workspace.template !== undefined) out.workspace.template = local(out.workspace.template);
  const args = (list: string[] | undefined) => list?.map((arg) => arg.split('{campaignDir}').join(base));
  if (out.target.kind === 'command') {
    out.target.command = asPath(out.target.command);
    out.target.args = args(out.target.args);
  }
  if (out.target.kind === 'agent' && 'preset' in out.target) {
    if (out.target.command !== undefined) out.target.command = asPath(out.target.command);
    out.target.args = args(out.target.args);
  }
  if (out.target.kind === 'mcp') {
    out.target.server.command = asPath(out.target.server.command);
    out.target.server.args = args(out.target.server.args);
  }
  return out;
}
