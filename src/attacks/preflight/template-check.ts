import { constants } from 'node:fs';
import { access, lstat, opendir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Campaign } from '../campaign.js';
import { heldByTemplate, TEMPLATE_EXPOSURE_FIX } from '../campaign-template-guard.js';
import type { PreflightCheck } from './preflight-report.js';

/**
 * The workspace template, checked before any attempt copies it: it exists, is a directory, holds nothing
 * a copy cannot make (a FIFO, a socket, a device: every attempt's copy failed on the first), and every
 * entry in it can be read; and it holds neither the campaign nor the memory (see
 * campaign-template-guard.ts). The walk does not follow symbolic links (they are copied as links) and
 * stops after `maxEntries`, saying so.
 */

/** Entries walked at most; a template larger than this is checked that far. */
export const TEMPLATE_CHECK_MAX_ENTRIES = 50_000;
/** Problems named at most (the rest are counted). */
const NAMED_PROBLEMS = 5;

export async function checkTemplate(
  campaign: Campaign,
  context: { campaignFile: string; memoryLocation?: string | undefined; signal?: AbortSignal | undefined },
  maxEntries = TEMPLATE_CHECK_MAX_ENTRIES,
): Promise<PreflightCheck | undefined> {
  const template = campaign.workspace.template;
  if (template === undefined) return undefined;
  const fail = (detail: string, fix: string): PreflightCheck => ({
    check: 'template',
    subject: template,
    status: 'fail',
    detail,
    fix,
  });
  const relativeHint =
    'workspace.template is resolved against the campaign file’s directory; give the directory the agent should start from';
  let root: Awaited<ReturnType<typeof stat>>;
  try {
    root = await stat(template);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return fail(
      code === 'ENOENT' ? 'no such directory' : `cannot be read (${code ?? String(error)})`,
      code === 'ENOENT' ? relativeHint : 'make it readable by the user running witness',
    );
  }
  if (!root.isDirectory()) return fail('is not a directory', relativeHint);
  const held = heldByTemplate(campaign, context);
  if (held.length > 0) {
    return fail(
      `holds ${held.join(' and ')}: every agent would read every attack and the stored results in its copy`,
      TEMPLATE_EXPOSURE_FIX,
    );
  }
  const walked = await walkTemplate(template, maxEntries, context.signal);
  if (walked.problems.length > 0) {
    const named = walked.problems.slice(0, NAMED_PROBLEMS).join('; ');
    const more =
      walked.problems.length > NAMED_PROBLEMS ? `; and ${walked.problems.length - NAMED_PROBLEMS} more` : '';
    return fail(
      `holds what a copy cannot make or read: ${named}${more}`,
      'remove FIFOs, sockets and devices from the template and make every entry readable (each attempt copies the whole template)',
    );
  }
  return {
    check: 'template',
    subject: template,
    status: 'pass',
    detail: walked.complete
      ? `a readable directory of ${walked.entries} entries`
      : `a readable directory; its first ${walked.entries} entries were checked`,
  };
}

async function walkTemplate(
  root: string,
  maxEntries: number,
  signal: AbortSignal | undefined,
): Promise<{ entries: number; complete: boolean; problems: string[] }> {
  const problems: string[] = [];
  let entries = 0;
  const pending = [''];
  while (pending.length > 0) {
    signal?.throwIfAborted();
    const relative = pending.pop() as string;
    let dir: Awaited<ReturnType<typeof opendir>>;
    try {
      dir = await opendir(join(root, relative));
    } catch (error) {
      problems.push(`${relative || '.'}: cannot be listed (${(error as NodeJS.ErrnoException).code})`);
      continue;
    }
    for await (const entry of dir) {
      if (++entries > maxEntries) {
        await dir.close().catch(() => undefined);
        return { entries: maxEntries, complete: false, problems };
      }
      const path = relative === '' ? entry.name : `${relative}/${entry.name}`;
      if (entry.isDirectory()) pending.push(path);
      else if (entry.isFIFO()) problems.push(`${path} is a FIFO`);
      else if (entry.isSocket()) problems.push(`${path} is a socket`);
      else if (entry.isBlockDevice() || entry.isCharacterDevice()) problems.push(`${path} is a device`);
      else if (entry.isFile()) {
        const readable = await access(join(root, path), constants.R_OK).then(
          () => true,
          () => false,
        );
        if (!readable) problems.push(`${path} cannot be read`);
      } else if (!entry.isSymbolicLink()) {
        const kind = await lstat(join(root, path)).then(
          () => 'of an unknown kind',
          () => 'gone while it was checked',
        );
        problems.push(`${path} is ${kind}`);
      }
    }
  }
  return { entries, complete: true, problems };
}
