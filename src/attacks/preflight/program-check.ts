import { closeSync, existsSync, openSync, readSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, sep } from 'node:path';
import { InvalidOptionError } from '../../errors.js';
import { findProgram, interpreterOf, SYSTEM_DIRECTORIES } from '../../sandbox/host-view.js';
import {
  attemptHostView,
  refuseUnreachableProgram,
  type SandboxSettings,
} from '../../sandbox/sandbox-settings.js';
import { AGENT_PRESET_MODULES } from '../../targets/presets/preset-registry.js';
import { agentParts, isPresetAgent, type TargetConfig } from '../../targets/target-config.js';
import { scriptArguments } from '../../text/placeholders.js';
import type { Campaign } from '../campaign.js';
import type { PreflightCheck } from './preflight-report.js';

/**
 * The programs a campaign's target starts (a command agent, an agent preset's CLI, an MCP server),
 * checked as the attempt will meet them: found on the agent's PATH (or at the path given) as an
 * executable file, the interpreter its `#!` line names found there too, each script the configuration
 * names present, and — under bubblewrap — all of them inside what the sandbox shows of the host (a
 * program under the operator's home is never shown, so the agent could not start it).
 */

interface ProgramSpec {
  /** What the program is, for people ("the qwen-code agent"). */
  what: string;
  command: string;
  /** The target's own variables (its PATH, if any, is the agent's). */
  env: Readonly<Record<string, string>> | undefined;
  /** Scripts the configuration names (absolute paths once the campaign is loaded). */
  scripts: readonly string[];
  /** How to get the program when it is missing. */
  install: string;
}

/** The programs of a target; none for a target that runs inside Witness. */
export function programsOf(config: TargetConfig): ProgramSpec[] {
  if (config.kind === 'command') {
    return [
      {
        what: 'the command agent',
        command: config.command,
        env: config.env,
        scripts: scriptArguments(config.args),
        install: 'install it, or give its path in target.command',
      },
    ];
  }
  if (isPresetAgent(config)) {
    const preset = AGENT_PRESET_MODULES[config.preset];
    return [
      {
        what: `the ${config.preset} agent`,
        command: config.command ?? preset.defaultCommand,
        env: undefined,
        scripts: [],
        install: `install it (npm install -g ${preset.npmPackage}), or give its path in target.command`,
      },
    ];
  }
  const { toolbox } = agentParts(config);
  if (toolbox.kind !== 'mcp') return [];
  return [
    {
      what: 'the MCP server',
      command: toolbox.command,
      env: toolbox.env,
      scripts: scriptArguments(toolbox.args),
      install: 'install it, or give its path in the server’s command',
    },
  ];
}

/** What of the target is a process, for people ("the qwen-code agent (qwen)"). */
export function describeProcesses(campaign: Campaign): string {
  return programsOf(campaign.target)
    .map((spec) => `${spec.what} (${spec.command})`)
    .join(' and ');
}

export function checkPrograms(
  campaign: Campaign,
  context: {
    hostEnv: Readonly<Record<string, string | undefined>>;
    /** The campaign's sandbox, when it could be had (without it the host's view is checked). */
    sandbox: SandboxSettings | undefined;
  },
): PreflightCheck[] {
  return programsOf(campaign.target).map((spec) => checkProgram(spec, campaign, context));
}

function checkProgram(
  spec: ProgramSpec,
  campaign: Campaign,
  context: {
    hostEnv: Readonly<Record<string, string | undefined>>;
    sandbox: SandboxSettings | undefined;
  },
): PreflightCheck {
  const searchPath =
    spec.env?.PATH ?? campaign.env?.PATH ?? context.hostEnv.PATH ?? '/usr/local/bin:/usr/bin:/bin';
  const subject = `${spec.what} (${spec.command})`;
  const fail = (detail: string, fix: string): PreflightCheck => ({
    check: 'program',
    subject,
    status: 'fail',
    detail,
    fix,
  });
  const program = findProgram(spec.command, searchPath);
  if (program === undefined) {
    return spec.command.includes('/')
      ? fail(
          existsSync(spec.command) ? 'is not an executable file' : 'no such file',
          `check the path (a relative one is resolved against the campaign file’s directory), or make the file executable (chmod +x); or ${spec.install}`,
        )
      : fail(`not found on the agent’s PATH (${searchPath})`, spec.install);
  }
  const interpreter = interpreterLine(program);
  const interpreterFile = interpreter === undefined ? undefined : interpreterOf(program, searchPath);
  if (
    interpreter !== undefined &&
    (interpreterFile === undefined || findProgram(interpreterFile, searchPath) === undefined)
  ) {
    return fail(
      `${program} starts with #!${interpreter}, which is not found on the agent’s PATH (${searchPath})`,
      'install the interpreter, or set PATH in the campaign’s env: to include its directory',
    );
  }
  const missing = spec.scripts.filter((script) => !existsSync(script));
  if (missing.length > 0) {
    return fail(
      `names ${missing.join(', ')}, which does not exist`,
      'check the path in args ({campaignDir} is the campaign file’s directory)',
    );
  }
  const sandbox = context.sandbox;
  if (sandbox?.containment.mode === 'bwrap') {
    const view = attemptHostView(sandbox, {
      command: spec.command,
      programFiles: spec.scripts,
      env: spec.env,
      // Any run directory: what is shown does not depend on its name, only on where run directories are made.
      runPath: join(tmpdir(), 'witness-run-preflight'),
    });
    // As the kernel will meet them: each name normalized (`examples/../node_modules/x`), and its real file.
    const needed = [program, ...spec.scripts].flatMap((path) => [resolve(path), realOr(path)]);
    const unseen = [...new Set(needed)].filter((path) => !visible(path, view.shown));
    if (unseen.length > 0) {
      const why = view.withheld.map((entry) => `${entry.path}: ${entry.reason}`);
      return fail(
        `${unseen.join(', ')} would not be visible inside the sandbox${why.length > 0 ? ` (not shown: ${why.join('; ')})` : ''}`,
        'install the program outside your home directory and outside the temporary directory (for example under /usr/local or /opt, or in a project directory), or say sandbox: none in the campaign to run the agent unconfined',
      );
    }
  }
  if (sandbox !== undefined) {
    // When Witness runs as root the agent runs as a user of its own, who must be able to reach the program.
    try {
      refuseUnreachableProgram(sandbox, { command: spec.command, programFiles: spec.scripts, env: spec.env });
    } catch (error) {
      if (!(error instanceof InvalidOptionError)) throw error;
      return fail(
        error.message,
        'give the agent’s user access as said (chmod), or keep the program where that user can reach it',
      );
    }
  }
  return {
    check: 'program',
    subject,
    status: 'pass',
    detail:
      sandbox?.containment.mode === 'bwrap'
        ? `${program}, executable and visible inside the sandbox`
        : `${program}, executable`,
  };
}

/** The interpreter on a script's `#!` line, or undefined for a binary (or a file that cannot be read). */
function interpreterLine(program: string): string | undefined {
  const line = readFirstLine(program);
  return line?.startsWith('#!') === true ? line.slice(2).trim() : undefined;
}

function readFirstLine(path: string): string | undefined {
  try {
    const fd = openSync(path, 'r');
    try {
      const head = Buffer.alloc(256);
      return head
        .subarray(0, readSync(fd, head, 0, head.length, 0))
        .toString('latin1')
        .split('\n')[0];
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
}

/** True when `path` lies in a system directory or in a path the sandbox shows. */
function visible(path: string, shown: readonly string[]): boolean {
  const systems = SYSTEM_DIRECTORIES.flatMap((system) => [system, realOr(system)]);
  return [...systems, ...shown].some((root) => path === root || path.startsWith(`${root}${sep}`));
}

function realOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
