import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';

/**
 * Transparent redirection inside a sandbox's network namespace (SPEC §14): a program that ignores the
 * proxy variables (Node 20's `fetch`, a raw socket, `curl --noproxy '*'`) and connects to an address finds
 * no route out of a namespace holding only `lo`, and its connection was blocked but not seen. Here Witness,
 * from outside and before the agent's command starts, gives the namespace a default route through `lo`
 * (so such a connect() reaches netfilter instead of failing with ENETUNREACH) and netfilter rules that
 * send every TCP connection to a non-loopback address to Witness's redirect listener on the sandbox's
 * loopback (which reads the original destination with SO_ORIGINAL_DST and records it), and every DNS
 * query to any server to Witness's resolver.
 *
 * Who may change the rules: only a holder of CAP_NET_ADMIN over the namespace. The rules are written by
 * `ip`/`iptables-restore` run as Witness (root) through `nsenter --net`, in Witness's own user namespace;
 * the agent's processes hold no capability (bubblewrap drops every one before exec, and no user namespace
 * is made for them in which they could hold one), so an agent that tries to flush the rules or delete the
 * route is refused (EPERM) and its connections stay recorded. The tools are Debian's iproute2 and iptables
 * (either backend), found in the system's sbin directories, never on a PATH an agent could shape.
 */

const SEARCH_DIRECTORIES = ['/usr/sbin', '/sbin', '/usr/bin', '/bin'];

export interface RedirectionTools {
  nsenter: string;
  ip: string;
  iptablesRestore: string;
  /** Absent where the system has no ip6tables: IPv6 connections then stay unroutable (blocked, unseen). */
  ip6tablesRestore?: string | undefined;
}

export interface RedirectionPorts {
  /** The redirect listener's TCP port on the sandbox's loopback. */
  tcp: number;
  /** The resolver's UDP port there (every DNS query goes to it), if one is open. */
  dns?: number | undefined;
}

let found: RedirectionTools | { reason: string } | undefined;

function locate(name: string): string | undefined {
  for (const directory of SEARCH_DIRECTORIES) {
    const candidate = join(directory, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** The tools redirection needs, or why it is unavailable (a missing Debian package is named). */
export function redirectionTools(): RedirectionTools | { reason: string } {
  found ??= locateTools();
  return found;
}

function locateTools(): RedirectionTools | { reason: string } {
  if (process.platform !== 'linux') return { reason: 'netfilter is Linux only' };
  const nsenter = locate('nsenter');
  const ip = locate('ip');
  const iptablesRestore = locate('iptables-restore');
  if (nsenter === undefined || ip === undefined || iptablesRestore === undefined) {
    const missing = [
      nsenter === undefined ? 'nsenter (util-linux)' : undefined,
      ip === undefined ? 'ip (iproute2)' : undefined,
      iptablesRestore === undefined ? 'iptables-restore (iptables)' : undefined,
    ].filter((entry) => entry !== undefined);
    return {
      reason: `transparent redirection needs ${missing.join(', ')}: install the Debian package(s); without it a program that ignores the proxy is blocked but only its name lookups are recorded`,
    };
  }
  return { nsenter, ip, iptablesRestore, ip6tablesRestore: locate('ip6tables-restore') };
}

/** The nat table of one address family: loopback traffic untouched, TCP to the listener, DNS to the resolver. */
export function natRules(family: 4 | 6, ports: RedirectionPorts): string {
  const loopback = family === 4 ? '127.0.0.0/8' : '::1/128';
  return [
    '*nat',
    ':PREROUTING ACCEPT [0:0]',
    ':INPUT ACCEPT [0:0]',
    ':OUTPUT ACCEPT [0:0]',
    ':POSTROUTING ACCEPT [0:0]',
    `-A OUTPUT -d ${loopback} -j RETURN`,
    `-A OUTPUT -p tcp -j REDIRECT --to-ports ${ports.tcp}`,
    ...(ports.dns === undefined || family === 6
      ? []
      : [`-A OUTPUT -p udp --dport 53 -j REDIRECT --to-ports ${ports.dns}`]),
    'COMMIT',
    '',
  ].join('\n');
}

function run(file: string, args: readonly string[], input?: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = execFile(file, args, { env: {}, timeout: 10_000 }, (error, _stdout, stderr) => {
      if (error === null) resolve();
      else
        reject(new Error(`${[file, ...args].join(' ')} failed: ${String(stderr).trim() || error.message}`));
    });
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(input ?? '');
  });
}

/**
 * Sets up redirection in the network namespace of process `pid` (the sandbox's blocked init). Rejects
 * when a step fails; the caller then never starts the agent's command.
 */
export async function redirectInNamespace(pid: number, ports: RedirectionPorts): Promise<void> {
  const tools = redirectionTools();
  // internal: callers ask redirectionTools() first and redirect only where it found the tools.
  if ('reason' in tools) throw new Error(tools.reason);
  const enter = [`--net=/proc/${pid}/ns/net`, '--'];
  const steps: Array<Promise<void>> = [
    // `src`: without it a connection leaves from 0.0.0.0, and the redirected replies never reach it.
    run(tools.nsenter, [
      ...enter,
      tools.ip,
      '-4',
      'route',
      'add',
      'default',
      'dev',
      'lo',
      'src',
      '127.0.0.1',
    ]).then(() => run(tools.nsenter, [...enter, tools.iptablesRestore, '-w', '5'], natRules(4, ports))),
  ];
  if (tools.ip6tablesRestore !== undefined) {
    // Best effort: where IPv6 cannot be set up (disabled in the kernel), its connections stay unroutable
    // — blocked, unseen; a route without its rules leads nowhere either (lo does not forward).
    const restore6 = tools.ip6tablesRestore;
    steps.push(
      run(tools.nsenter, [...enter, tools.ip, '-6', 'route', 'add', 'default', 'dev', 'lo', 'src', '::1'])
        .then(() => run(tools.nsenter, [...enter, restore6, '-w', '5'], natRules(6, ports)))
        .catch(() => undefined),
    );
  }
  await Promise.all(steps);
}
