import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import type { Command } from 'commander';
import { neutralizeText } from '../../text/quote-text.js';
import { type CliIo, printJson } from '../io.js';
import { DB_ENV, optionalDb } from '../memory-option.js';

/**
 * `witness doctor [--db <url>] [--json]`: what this machine gives Witness, and how to get what it lacks.
 * Each line is asked of the probe Witness itself uses, so the answer is the one a run would get: the
 * sandbox trial of `witness run` (bubblewrap on PATH, user namespaces), the acquisition's choice of
 * file-system seam. A PostgreSQL URL is only read (its server version, whether it holds a memory):
 * nothing is written anywhere. The exit status is 0 whatever is missing (a report, not a
 * gate); `--json` prints `{ checks }`.
 */

export const DOCTOR_STATUSES = ['ok', 'fallback', 'missing', 'failed', 'not_asked'] as const;
export type DoctorStatus = (typeof DOCTOR_STATUSES)[number];

export interface DoctorCheck {
  id:
    | 'node'
    | 'sandbox'
    | 'network_namespaces'
    | 'network_redirection'
    | 'surface_fs'
    | 'chromium'
    | 'postgres';
  /** ok: given; fallback: Witness works another way; missing/failed: a feature is out of reach here. */
  status: DoctorStatus;
  /** What was found, or why not. */
  detail: string;
  /** How to get it, when it is not ok. */
  fix?: string | undefined;
  /** The Debian package that gives it, when that is the fix (gathered into one apt-get line). */
  aptPackage?: string | undefined;
}

/** Debian's Chromium, where the report screenshot (scripts/report-screenshot.ts) and browser tests look. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/** package.json `engines`: Node.js 20.11 or later on the 20 line, or 24. */
export function nodeSupported(version: string): boolean {
  const match = /^v?(\d+)\.(\d+)\./.exec(version);
  if (match === null) return false;
  const [major, minor] = [Number(match[1]), Number(match[2])];
  return (major === 20 && minor >= 11) || major === 24;
}

export function registerDoctor(program: Command, io: CliIo): void {
  program
    .command('doctor')
    .description(
      'say what this machine gives Witness (sandbox, file-system seam, Chromium, PostgreSQL) and how to get the rest',
    )
    .option('--db <url>', `a PostgreSQL memory to try (default: $${DB_ENV} when it is a postgres:// URL)`)
    .option('--json', 'print { checks } as JSON')
    .action(async (options: Record<string, unknown>) => {
      const checks = await runChecks(optionalDb(options, io.env), io.env.PATH);
      if (options.json === true) printJson(io, { checks });
      else io.out(renderChecks(checks));
    });
}

async function runChecks(db: string | undefined, searchPath: string | undefined): Promise<DoctorCheck[]> {
  const [sandbox, postgres] = await Promise.all([sandboxCheck(searchPath), postgresCheck(db)]);
  return [
    nodeCheck(),
    sandbox.check,
    await networkCheck(sandbox.bwrapPath),
    await redirectionCheck(),
    await surfaceFsCheck(),
    chromiumCheck(),
    postgres,
  ];
}

function nodeCheck(): DoctorCheck {
  const version = process.version;
  return nodeSupported(version)
    ? { id: 'node', status: 'ok', detail: `Node.js ${version}` }
    : {
        id: 'node',
        status: 'failed',
        detail: `Node.js ${version} is not a supported line`,
        fix: 'install Node.js 20 (20.11 or later) or 24',
      };
}

async function sandboxCheck(
  searchPath: string | undefined,
): Promise<{ check: DoctorCheck; bwrapPath?: string | undefined }> {
  const { detectSandbox } = await import('../../sandbox/sandbox-availability.js');
  const { DEFAULT_AGENT_USER, runningAsRoot } = await import('../../sandbox/agent-user.js');
  const { DEFAULT_UID_POOL } = await import('../../sandbox/agent-uid-pool.js');
  // As root, the sandbox must also make the agent its own unprivileged user (setpriv), as every run does.
  const agentUser = runningAsRoot() ? DEFAULT_AGENT_USER : undefined;
  const availability = await detectSandbox({ searchPath, agentUser });
  if (availability.available) {
    const as =
      agentUser === undefined
        ? ''
        : `; agents run as uid ${agentUser.uid} (or the campaign's runAs:); under sandbox: none each ` +
          `attempt as a uid of its own (runAs: 'FIRST-LAST', or ${DEFAULT_UID_POOL.first}-${DEFAULT_UID_POOL.last})`;
    return {
      check: {
        id: 'sandbox',
        status: 'ok',
        detail: `bubblewrap (${availability.bwrapPath}) starts a sandbox: user namespaces allowed${as}`,
      },
      bwrapPath: availability.bwrapPath,
    };
  }
  const absent = availability.reason.includes('not found on PATH');
  const noSetpriv = availability.reason.includes('`setpriv`');
  return {
    check: {
      id: 'sandbox',
      status: 'missing',
      detail: `no sandbox for command and MCP agents: ${availability.reason}`,
      fix: absent
        ? 'install bubblewrap (or write `sandbox: none` in a campaign to run its agents uncontained)'
        : noSetpriv
          ? 'install util-linux (setpriv), or run Witness as an unprivileged user'
          : 'allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04 also kernel.apparmor_restrict_unprivileged_userns=0)',
      aptPackage: absent ? 'bubblewrap' : noSetpriv ? 'util-linux' : undefined,
    },
  };
}

/**
 * `network: none` gives the agent a network namespace of its own (bubblewrap `--unshare-net`). Some
 * machines allow user namespaces but refuse a new network namespace, so bubblewrap is asked for one alone.
 */
async function networkCheck(bwrapPath: string | undefined): Promise<DoctorCheck> {
  if (bwrapPath === undefined) {
    return {
      id: 'network_namespaces',
      status: 'missing',
      detail: 'not tried: no sandbox',
      fix: 'see sandbox',
    };
  }
  // The host read-only and nothing else: whether the rest of the sandbox starts is the line above.
  const failure = await runsTrue(bwrapPath, ['--ro-bind', '/', '/', '--unshare-net', '--', 'true']);
  return failure === undefined
    ? {
        id: 'network_namespaces',
        status: 'ok',
        detail: 'a sandbox gets a network of its own (network: none)',
      }
    : {
        id: 'network_namespaces',
        status: 'missing',
        detail: `a sandbox with its own network failed: ${failure}`,
        fix: 'allow network namespaces for unprivileged users, or keep campaigns on network: host',
      };
}

/**
 * `network: proxy` redirects a connection that ignores the proxy variables (Node 20's `fetch`, a raw
 * socket) to Witness's proxy through nftables rules written in process by libnftables. Without the
 * library such a connection is still blocked, but only its name lookup is recorded.
 */
async function redirectionCheck(): Promise<DoctorCheck> {
  const { redirectionUnavailable } = await import('../../sandbox/namespace-redirection.js');
  const unavailable = redirectionUnavailable();
  return unavailable === undefined
    ? {
        id: 'network_redirection',
        status: 'ok',
        detail:
          'libnftables: under network: proxy, a program that ignores the proxy is redirected to it and recorded',
      }
    : {
        id: 'network_redirection',
        status: 'fallback',
        detail: unavailable,
        fix: 'install nftables (libnftables1)',
        aptPackage: 'nftables',
      };
}

async function surfaceFsCheck(): Promise<DoctorCheck> {
  const { openat2Unavailable } = await import('../../sources/confined-fs.js');
  const unavailable = openat2Unavailable();
  return unavailable === undefined
    ? { id: 'surface_fs', status: 'ok', detail: 'openat2: the kernel confines every open beneath the root' }
    : {
        id: 'surface_fs',
        status: 'fallback',
        detail: `procfs (openat2 unavailable: ${unavailable}); the same confinement, checked by a readlink per file`,
        fix: 'Linux 5.6 or later, and koffi loading its prebuilt binary for this platform',
      };
}

function chromiumCheck(): DoctorCheck {
  try {
    accessSync(CHROMIUM_PATH, constants.X_OK);
    return {
      id: 'chromium',
      status: 'ok',
      detail: `${CHROMIUM_PATH} (the report screenshot, browser tests)`,
    };
  } catch {
    return {
      id: 'chromium',
      status: 'missing',
      detail: `no ${CHROMIUM_PATH}: the report screenshot and the browser tests cannot run (reports still work)`,
      fix: 'install chromium',
      aptPackage: 'chromium',
    };
  }
}

async function postgresCheck(db: string | undefined): Promise<DoctorCheck> {
  if (db === undefined || !/^postgres(ql)?:\/\//i.test(db)) {
    return {
      id: 'postgres',
      status: 'not_asked',
      detail: `no PostgreSQL URL given (--db postgres://… or ${DB_ENV}); the memory is SQLite`,
    };
  }
  const { redactUrl } = await import('../../memory/open-memory.js');
  const { default: pg } = await import('pg');
  const where = redactUrl(db);
  // A plain read, not openMemory: opening a memory migrates an older schema, and the doctor writes nothing.
  const client = new pg.Client({ connectionString: db, connectionTimeoutMillis: 10_000 });
  client.on('error', () => {});
  try {
    await client.connect();
    const { rows } = await client.query<{ version: string; witness: boolean }>(
      "select current_setting('server_version') as version, to_regclass('witness_schema') is not null as witness",
    );
    const row = rows[0];
    return {
      id: 'postgres',
      status: 'ok',
      detail: `${where}: PostgreSQL ${row?.version ?? '?'}, ${
        row?.witness === true
          ? 'holds a Witness memory'
          : 'no Witness memory yet (`witness run --db` creates one)'
      }`,
    };
  } catch (error) {
    return {
      id: 'postgres',
      status: 'failed',
      detail: `${where}: ${(error as Error).message}`,
      fix: 'check the URL, that the server runs and that it accepts this user',
    };
  } finally {
    await client.end().catch(() => {});
  }
}

/** Resolves undefined when `command args` exits 0 within 10 s, else why not. */
function runsTrue(command: string, args: readonly string[]): Promise<string | undefined> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 2_000) stderr += chunk.toString('utf8');
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      resolve(error.message);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(undefined);
      else
        resolve(
          `${code === null ? `killed by ${signal}` : `status ${code}`} ${stderr.trim().slice(0, 300)}`.trim(),
        );
    });
  });
}

const MARKS: Readonly<Record<DoctorStatus, string>> = {
  ok: 'ok',
  fallback: 'fallback',
  missing: 'missing',
  failed: 'FAILED',
  not_asked: '-',
};

const LABELS: Readonly<Record<DoctorCheck['id'], string>> = {
  node: 'Node.js',
  sandbox: 'sandbox',
  network_namespaces: 'network namespaces',
  network_redirection: 'network redirection',
  surface_fs: 'file-system seam',
  chromium: 'Chromium',
  postgres: 'PostgreSQL',
};

export function renderChecks(checks: readonly DoctorCheck[]): string {
  const lines = ['What this machine gives Witness:', ''];
  for (const check of checks) {
    lines.push(
      `  ${MARKS[check.status].padEnd(9)}${LABELS[check.id].padEnd(20)}${neutralizeText(check.detail)}`,
    );
    if (check.status !== 'ok' && check.fix !== undefined) lines.push(`  ${''.padEnd(29)}→ ${check.fix}`);
  }
  const packages = [
    ...new Set(checks.flatMap((check) => (check.aptPackage === undefined ? [] : [check.aptPackage]))),
  ];
  lines.push(
    '',
    packages.length === 0
      ? 'Nothing to install.'
      : `To get what is missing (Debian, Ubuntu): sudo apt-get install ${packages.join(' ')}`,
  );
  return `${lines.join('\n')}\n`;
}
