import { readFileSync, writeFileSync } from 'node:fs';
import { connect as netConnect, type Socket } from 'node:net';
import { join } from 'node:path';
import {
  type BlockedConnection,
  type NetworkEvidence,
  unobservedNetwork,
} from '../models/network-evidence.js';
import type { NetworkMode } from '../models/vocabulary.js';
import type { CertificateAuthority } from './certificate-authority.js';
import type { Destination } from './destination-policy.js';
import { type EgressProxy, type EgressProxyOptions, startEgressProxy } from './egress-proxy.js';
import type { NetworkSettings } from './network-settings.js';
import { originalDestination } from './original-destination.js';
import { SandboxResolver } from './sandbox-resolver.js';

/**
 * One attempt's network (SPEC §14). Under `network: proxy` it owns the attempt's egress proxy and says what
 * the sandbox needs to use it: the listeners to open on the sandbox's own loopback (the proxy at
 * 127.0.0.1:3128, one relay per model endpoint at 3129, 3130, …, the name resolver at 53, which
 * records the names a program that ignores the proxy looks up as blocked connections, and the redirect
 * listener at 3127, to which the sandbox sends every TCP connection that ignored the proxy, recorded by
 * the proxy with the address it was going to and never forwarded), the variables that
 * point the agent's runtimes at them, and the certificate bundle of `intercept: true`. Under `host` and `none` it only
 * states what its evidence is: unobserved, or nothing could leave.
 *
 * ```ts
 * const network = openAttemptNetwork({ mode: 'proxy', allow: [], intercept: false });
 * const url = network.egress?.relayEndpoint('http://127.0.0.1:8719/v1'); // http://127.0.0.1:3129/v1
 * // run the agent with network.egress, then:
 * const evidence = network.evidence();
 * await network.close();
 * ```
 */

/** The proxy's port on the sandbox's loopback. */
export const EGRESS_PROXY_PORT = 3128;
/** The redirect listener's port there: connections that ignored the proxy, redirected by the sandbox. */
export const REDIRECT_PORT = 3127;
/** Model endpoint relays take the ports after it. */
const FIRST_RELAY_PORT = 3129;
/** Where the certificate bundle of `intercept: true` appears inside the sandbox. */
export const SANDBOX_CA_BUNDLE = '/tmp/.witness-egress/ca-bundle.pem';
/** Bytes of the system bundle copied into the attempt's bundle at most. */
const MAX_SYSTEM_BUNDLE_BYTES = 4 * 1024 * 1024;
const SYSTEM_BUNDLES = [
  '/etc/ssl/certs/ca-certificates.crt',
  '/etc/pki/tls/certs/ca-bundle.crt',
  '/etc/ssl/cert.pem',
];

/** The resolver's port on the sandbox's loopback (UDP and TCP), named by the sandbox's resolv.conf. */
export const SANDBOX_RESOLVER_PORT = 53;
/** What the sandbox's `/etc/resolv.conf` says: the resolver Witness runs there, and nothing else. */
export const SANDBOX_RESOLV_CONF = 'nameserver 127.0.0.1\noptions attempts:1 timeout:2\n';

/** A listener to open on the sandbox's loopback before the agent starts, and what serves it. */
export type NamespaceListener =
  | {
      protocol?: 'tcp' | undefined;
      port: number;
      /** Where the sandbox can, every TCP connection to an address outside its loopback comes here. */
      redirect?: 'tcp' | undefined;
      onConnection(socket: Socket): void;
      /**
       * With `redirect`: told, when the sandbox ends, the UDP destinations its datagrams were dropped on the
       * way to (`via: udp`), and whether some datagrams went uncounted (more destinations than were kept).
       */
      onDatagrams?: ((blocked: BlockedConnection[], uncounted: boolean) => void) | undefined;
    }
  | {
      protocol: 'udp';
      port: number;
      /** Where the sandbox can, every DNS query to any server comes here. */
      redirect?: 'dns' | undefined;
      onDatagram(message: Buffer): Buffer | undefined;
    };

export interface AttemptEgress {
  /** The attempt's proxy (an in-process tool sends through it with `accept`). */
  readonly proxy: EgressProxy;
  /** The run's CA certificate under `intercept: true`, for an in-process client to trust. */
  readonly trustedCa?: string | undefined;
  /**
   * The model endpoint as the agent must call it: a plain-HTTP endpoint is relayed to a port on the
   * sandbox's loopback and its URL rewritten; an HTTPS endpoint elsewhere is left as is (reached through
   * the proxy, which always allows it). The endpoint's origin is always allowed by the proxy.
   */
  relayEndpoint(url: string): string;
  listeners(): NamespaceListener[];
  /** The proxy variables (and the CA bundle's) for the agent's environment. */
  environment(): Record<string, string>;
  /** Host files shown read-only in the sandbox at `path` (the CA bundle, the resolver's resolv.conf). */
  readOnlyFiles(): Array<{ source: string; path: string }>;
}

export interface AttemptNetwork {
  readonly mode: NetworkMode;
  /** Present under `network: proxy`. */
  readonly egress?: AttemptEgress | undefined;
  /** The evidence so far (values as sent; redacted when stored). */
  evidence(): NetworkEvidence;
  close(): Promise<void>;
}

export interface RunNetwork {
  settings: NetworkSettings;
  /** The run's CA, under `intercept: true`. */
  ca?: CertificateAuthority | undefined;
  /** The host file holding the system bundle plus the run's CA, under `intercept: true`. */
  caBundlePath?: string | undefined;
  /**
   * A host file holding {@link SANDBOX_RESOLV_CONF}, shown at `/etc/resolv.conf` in the sandbox; without
   * it the sandbox keeps the host's (whose servers it cannot reach) and lookups are not recorded.
   */
  resolvConfPath?: string | undefined;
}

/** Writes the sandbox's resolv.conf (naming Witness's resolver) in a run directory. */
export function writeResolvConf(directory: string): string {
  const path = join(directory, 'sandbox-resolv.conf');
  writeFileSync(path, SANDBOX_RESOLV_CONF, { mode: 0o644 });
  return path;
}

/** Writes the bundle handed to the agent's runtimes: the system's CAs and the run's, in a run directory. */
export function writeCaBundle(directory: string, ca: CertificateAuthority): string {
  let system = '';
  for (const candidate of SYSTEM_BUNDLES) {
    try {
      const text = readFileSync(candidate, 'utf8');
      if (text.length <= MAX_SYSTEM_BUNDLE_BYTES) {
        system = text;
        break;
      }
    } catch {
      // not on this system
    }
  }
  const path = join(directory, 'egress-ca-bundle.pem');
  writeFileSync(path, `${system}${system.endsWith('\n') || system === '' ? '' : '\n'}${ca.certificatePem}`, {
    mode: 0o644,
  });
  return path;
}

export function openAttemptNetwork(
  run: RunNetwork,
  proxyOptions: Omit<EgressProxyOptions, 'allow' | 'alwaysAllow' | 'ca'> = {},
): AttemptNetwork {
  const { settings } = run;
  if (settings.mode !== 'proxy') {
    const evidence = unobservedNetwork(settings.mode);
    return { mode: settings.mode, evidence: () => structuredClone(evidence), close: () => Promise.resolve() };
  }
  const always: Destination[] = [];
  const relays: Relay[] = [];
  const proxy = startEgressProxy({
    ...proxyOptions,
    allow: settings.allow,
    alwaysAllow: always,
    ca: settings.intercept ? run.ca : undefined,
  });
  const relaySockets = new Set<Socket>();
  const resolver = new SandboxResolver();
  // Dropped UDP datagrams by destination, told when the sandbox ends (where redirection was set up).
  let datagrams: BlockedConnection[] = [];
  let uncountedDatagrams = false;
  const egress: AttemptEgress = {
    proxy,
    trustedCa: settings.intercept ? run.ca?.certificatePem : undefined,
    relayEndpoint: (url: string): string => relayEndpoint(url, always, relays),
    listeners: (): NamespaceListener[] =>
      namespaceListeners(run, proxy, resolver, relays, relaySockets, (blocked, uncounted) => {
        datagrams = blocked;
        uncountedDatagrams = uncounted;
      }),
    environment: (): Record<string, string> => proxyEnvironment(run),
    readOnlyFiles: () => sandboxReadOnlyFiles(run),
  };
  return {
    mode: 'proxy',
    egress,
    evidence: () => {
      const evidence = proxy.evidence();
      const lookups = resolver.blocked();
      const blocked = [...lookups.blocked, ...datagrams].sort((a, b) => a.at.localeCompare(b.at));
      // Uncounted datagrams: at least one destination more than the set kept.
      const dropped = lookups.dropped + (uncountedDatagrams ? 1 : 0);
      return {
        ...evidence,
        ...(blocked.length > 0 ? { blocked } : {}),
        ...(dropped > 0 ? { droppedBlocked: dropped } : {}),
      };
    },
    async close() {
      for (const socket of relaySockets) socket.destroy();
      relaySockets.clear();
      resolver.close();
      await proxy.close();
    },
  };
}

/** A model endpoint relayed from a port on the sandbox's loopback to its one upstream. */
interface Relay {
  port: number;
  upstream: Destination;
}

/**
 * {@link AttemptEgress.relayEndpoint}: the endpoint's origin joins the always-allowed destinations; a
 * plain-HTTP endpoint gets a relay port (one per upstream) and its URL is rewritten to it.
 */
function relayEndpoint(url: string, always: Destination[], relays: Relay[]): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  const https = parsed.protocol === 'https:';
  const upstream = {
    host: parsed.hostname.replace(/^\[|\]$/g, '').toLowerCase(),
    port: Number(parsed.port || (https ? 443 : 80)),
  };
  if (!always.some((entry) => entry.host === upstream.host && entry.port === upstream.port)) {
    always.push(upstream);
  }
  if (https || parsed.protocol !== 'http:') return url;
  let relay = relays.find(
    (entry) => entry.upstream.host === upstream.host && entry.upstream.port === upstream.port,
  );
  if (relay === undefined) {
    relay = { port: FIRST_RELAY_PORT + relays.length, upstream };
    relays.push(relay);
  }
  parsed.hostname = '127.0.0.1';
  parsed.port = String(relay.port);
  return parsed.href.replace(/\/$/, url.endsWith('/') ? '/' : '');
}

/** {@link AttemptEgress.listeners}: the proxy, the redirect listener, the resolver (with a resolv.conf), the relays. */
function namespaceListeners(
  run: RunNetwork,
  proxy: EgressProxy,
  resolver: SandboxResolver,
  relays: readonly Relay[],
  relaySockets: Set<Socket>,
  onDatagrams: (blocked: BlockedConnection[], uncounted: boolean) => void,
): NamespaceListener[] {
  return [
    { port: EGRESS_PROXY_PORT, onConnection: (socket) => proxy.accept(socket) },
    {
      port: REDIRECT_PORT,
      redirect: 'tcp' as const,
      // Read at once, while the accepted socket is fresh: where the program meant to connect.
      onConnection: (socket: Socket) => proxy.acceptRedirected(socket, originalDestination(socket)),
      onDatagrams,
    },
    ...(run.resolvConfPath === undefined
      ? []
      : [
          {
            protocol: 'udp' as const,
            port: SANDBOX_RESOLVER_PORT,
            redirect: 'dns' as const,
            onDatagram: (message: Buffer) => resolver.answer(message),
          },
          {
            port: SANDBOX_RESOLVER_PORT,
            onConnection: (socket: Socket) => resolver.acceptStream(socket),
          },
        ]),
    ...relays.map((relay) => ({
      port: relay.port,
      onConnection: (socket: Socket) => relayConnection(socket, relay.upstream, relaySockets),
    })),
  ];
}

/** The model endpoint: bytes relayed as they are, to the one upstream the relay was made for. */
function relayConnection(socket: Socket, to: Destination, relaySockets: Set<Socket>): void {
  const upstream = netConnect({ host: to.host, port: to.port });
  for (const end of [socket, upstream]) {
    relaySockets.add(end);
    end.once('close', () => relaySockets.delete(end));
    end.on('error', () => undefined);
  }
  socket.once('close', () => upstream.destroy());
  upstream.once('close', () => socket.destroy());
  socket.pipe(upstream);
  upstream.pipe(socket);
}

/** {@link AttemptEgress.environment}: the proxy variables, and the CA bundle's under `intercept: true`. */
function proxyEnvironment(run: RunNetwork): Record<string, string> {
  const proxyUrl = `http://127.0.0.1:${EGRESS_PROXY_PORT}`;
  const noProxy = 'localhost,127.0.0.1,::1';
  const env: Record<string, string> = {
    HTTP_PROXY: proxyUrl,
    HTTPS_PROXY: proxyUrl,
    ALL_PROXY: proxyUrl,
    NO_PROXY: noProxy,
    http_proxy: proxyUrl,
    https_proxy: proxyUrl,
    all_proxy: proxyUrl,
    no_proxy: noProxy,
    NODE_USE_ENV_PROXY: '1',
  };
  if (run.settings.intercept && run.caBundlePath !== undefined) {
    for (const name of ['NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'REQUESTS_CA_BUNDLE', 'CURL_CA_BUNDLE']) {
      env[name] = SANDBOX_CA_BUNDLE;
    }
  }
  return env;
}

/** {@link AttemptEgress.readOnlyFiles}: the CA bundle under `intercept: true`, the resolver's resolv.conf. */
function sandboxReadOnlyFiles(run: RunNetwork): Array<{ source: string; path: string }> {
  return [
    ...(run.settings.intercept && run.caBundlePath !== undefined
      ? [{ source: run.caBundlePath, path: SANDBOX_CA_BUNDLE }]
      : []),
    ...(run.resolvConfPath === undefined ? [] : [{ source: run.resolvConfPath, path: '/etc/resolv.conf' }]),
  ];
}
