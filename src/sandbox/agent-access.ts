import { existsSync, realpathSync, type Stats, statSync } from 'node:fs';
import { dirname, isAbsolute, relative, sep } from 'node:path';
import type { AgentUser } from './agent-user.js';
import { findProgram, interpreterOf, SYSTEM_DIRECTORIES } from './host-view.js';

/**
 * Whether the agent's own user can run what the target names (SPEC §13), decided before the run: when
 * Witness runs as root the agent does not, and a program in a checkout under `/root` (mode 0700), or a
 * campaign directory made by `mktemp -d` (0700), would fail in every attempt with a bare EACCES. The run
 * is refused instead, naming the path and the fix.
 *
 * What is checked, with the user's own permission bits (its uid, its one group; no capabilities):
 * - the program is executable, and readable when it is a script (`#!`); so is its interpreter;
 * - each script the configuration names is readable;
 * - every directory on the way to each of them can be searched — under bubblewrap from the host path it
 *   is shown under (its synthetic parents are open to all), without a sandbox from `/`.
 */

export interface AgentAccessInput {
  user: AgentUser;
  command: string;
  searchPath: string;
  programFiles?: readonly string[] | undefined;
  /** Under bubblewrap, the host paths shown (besides the system directories); without, undefined. */
  shown?: readonly string[] | undefined;
}

/** Why the agent's user cannot run what the target names, or undefined when it can. */
export function agentAccessProblem(input: AgentAccessInput): string | undefined {
  const program = findProgram(input.command, input.searchPath);
  if (program === undefined) return undefined; // a missing program is the launch's to report
  const checks: Array<{ path: string; needs: 'run' | 'read' }> = [{ path: program, needs: 'run' }];
  // A script is read by its interpreter, which must run too.
  const interpreter = interpreterOf(program, input.searchPath);
  if (interpreter !== undefined) {
    checks.push({ path: program, needs: 'read' }, { path: interpreter, needs: 'run' });
  }
  for (const file of input.programFiles ?? []) {
    if (isAbsolute(file) && existsSync(file)) checks.push({ path: file, needs: 'read' });
  }
  for (const check of checks) {
    const problem = accessProblem(check.path, check.needs, input);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/** Why the user cannot search every directory from `/` down to `directory`, or undefined. */
export function directorySearchProblem(user: AgentUser, directory: string): string | undefined {
  for (const at of directoriesBetween('/', realOrSelf(directory))) {
    const stats = statSync(at);
    if (!allows(stats, user, 0o1)) return describe(at, stats, 'search', user);
  }
  return undefined;
}

function accessProblem(path: string, needs: 'run' | 'read', input: AgentAccessInput): string | undefined {
  const real = realOrSelf(path);
  const root = viewRoot(real, input.shown);
  for (const directory of directoriesBetween(root, dirname(real))) {
    const stats = statSync(directory);
    if (!allows(stats, input.user, 0o1)) return describe(directory, stats, 'search', input.user);
  }
  const stats = statSync(real);
  const bits = needs === 'run' ? 0o1 : 0o4;
  if (!allows(stats, input.user, bits))
    return describe(real, stats, needs === 'run' ? 'execute' : 'read', input.user);
  return undefined;
}

/** True when the user's class of the file's permission bits holds every bit of `bits` (r 4, w 2, x 1). */
function allows(stats: Stats, user: AgentUser, bits: number): boolean {
  const shift = stats.uid === user.uid ? 6 : stats.gid === user.gid ? 3 : 0;
  return ((stats.mode >> shift) & bits) === bits;
}

function describe(path: string, stats: Stats, what: string, user: AgentUser): string {
  const mode = (stats.mode & 0o7777).toString(8).padStart(4, '0');
  const fix = what === 'search' ? 'o+x' : what === 'execute' ? 'o+rx' : 'o+r';
  return (
    `the agent runs as uid ${user.uid} (Witness runs as root, and its agents never do), which cannot ${what} ` +
    `${path} (mode ${mode}, owner ${stats.uid}:${stats.gid}): let it (chmod ${fix} ${path}), keep the agent ` +
    'somewhere others can read, or name a user who can with runAs: in the campaign'
  );
}

/**
 * Where the agent's view of `path` starts: the shown path (or system directory) holding it under
 * bubblewrap — whatever lies above is a synthetic parent, open to all — else `/`.
 */
function viewRoot(real: string, shown: readonly string[] | undefined): string {
  if (shown === undefined) return '/';
  const roots = [...shown, ...SYSTEM_DIRECTORIES].map(realOrSelf);
  const holding = roots.filter((root) => real === root || isInside(real, root));
  return holding.sort((a, b) => a.length - b.length)[0] ?? dirname(real);
}

/** `from` and every directory below it down to `to` (inclusive), outermost first. */
function directoriesBetween(from: string, to: string): string[] {
  const out: string[] = [];
  for (let at = to; ; at = dirname(at)) {
    out.unshift(at);
    if (at === from || at === dirname(at)) break;
  }
  return out;
}

function isInside(path: string, directory: string): boolean {
  const rel = relative(directory, path);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
