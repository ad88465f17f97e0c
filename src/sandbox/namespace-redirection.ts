import type { BlockedConnection } from '../models/network-evidence.js';
import { type NftablesContext, nftablesUnavailable, openNftables } from '../network/nftables.js';
import { addLoopbackDefaultRoute } from '../network/route-netlink.js';
import { inNetworkNamespace } from './network-namespace.js';

/**
 * Transparent redirection inside a sandbox's network namespace (SPEC §14): a program that ignores the
 * proxy variables (Node 20's `fetch`, a raw socket, `curl --noproxy '*'`) and connects to an address finds
 * no route out of a namespace holding only `lo`, and its connection was blocked but not seen. Here Witness,
 * before the agent's command starts, gives the namespace a default route through `lo` (so such a
 * connect() or sendto() reaches netfilter instead of failing with ENETUNREACH) and nftables rules that
 * send every TCP connection to a non-loopback address to Witness's redirect listener on the sandbox's
 * loopback (which reads the original destination with SO_ORIGINAL_DST and records it), every IPv4 DNS
 * query to any server to Witness's resolver, and drop every other packet bound outside, counting each UDP
 * datagram by its destination in a set Witness reads when the sandbox ends (a blocked connection with its
 * address, port, datagrams and bytes).
 *
 * How: Witness's main thread enters the namespace (as it does to open the listeners), adds the routes over
 * rtnetlink and the rules through libnftables, both in process, and returns; no process is started (four
 * process starts — nsenter with ip, nsenter with iptables-restore, for each family — cost 160 ms per
 * attempt on a loaded two-core machine). The nftables context keeps its netlink socket in the namespace,
 * so the datagram sets are read through it at the end from Witness's own namespace.
 *
 * Who may change the rules: only a holder of CAP_NET_ADMIN over the namespace. They are written by Witness
 * (root) in its own user namespace; the agent's processes hold no capability (bubblewrap drops every one
 * before exec, and no user namespace is made for them in which they could hold one), so an agent that
 * tries to flush the rules or delete the route is refused (EPERM) and its connections stay recorded.
 */

export interface RedirectionPorts {
  /** The redirect listener's TCP port on the sandbox's loopback. */
  tcp: number;
  /** The resolver's UDP port there (every IPv4 DNS query goes to it), if one is open. */
  dns?: number | undefined;
  /**
   * Told, when the sandbox is torn down, the UDP destinations its datagrams were dropped on the way to,
   * and whether some datagrams could not be attributed (more destinations than the set holds).
   */
  onDatagrams?: ((blocked: BlockedConnection[], unattributed: boolean) => void) | undefined;
}

/** What {@link redirectInNamespace} set up: closed (its datagram sets read first) when the sandbox ends. */
export interface NamespaceRedirection {
  /**
   * Adds the default routes through `lo` (without them a connection outside fails before netfilter sees
   * it); false, adding nothing, while `lo` is still down: ask again in a moment.
   */
  route(): boolean;
  close(): void;
}

/** UDP destinations kept per address family; a datagram to one more is dropped and counted apart. */
export const DATAGRAM_DESTINATIONS = 1024;
/** How long a set element lives; its remaining time dates the first datagram to it, to the second. */
const ELEMENT_TIMEOUT_S = 86_400;
const TABLE = 'witness';

/** Undefined when redirection can be set up here; otherwise why not (the missing Debian package named). */
export function redirectionUnavailable(): string | undefined {
  const problem = nftablesUnavailable();
  return problem === undefined
    ? undefined
    : `transparent redirection is unavailable: ${problem}; without it a program that ignores the proxy is blocked but only its name lookups are recorded`;
}

/**
 * The namespace's ruleset, in nft's syntax: loopback traffic untouched; TCP to the listener; IPv4 DNS to
 * the resolver; every other packet bound outside dropped, UDP datagrams counted by destination first.
 * `families` 6 leaves the IPv6 rules out (a kernel without IPv6).
 */
export function redirectionRuleset(ports: RedirectionPorts, withIpv6 = true): string {
  const set = (name: string, type: string) =>
    `  set ${name} { type ${type} . inet_service; size ${DATAGRAM_DESTINATIONS}; flags dynamic, timeout; timeout ${ELEMENT_TIMEOUT_S}s; counter; }`;
  return [
    `table inet ${TABLE} {`,
    set('udp4', 'ipv4_addr'),
    ...(withIpv6 ? [set('udp6', 'ipv6_addr')] : []),
    '  chain to_witness {',
    '    type nat hook output priority -100; policy accept;',
    '    ip daddr 127.0.0.0/8 return',
    ...(withIpv6 ? ['    ip6 daddr ::1 return'] : []),
    `    meta l4proto tcp redirect to :${ports.tcp}`,
    ...(ports.dns === undefined ? [] : [`    ip protocol udp udp dport 53 redirect to :${ports.dns}`]),
    '  }',
    '  chain outward {',
    // After the nat hook: a redirected packet is bound to the loopback by now.
    '    type filter hook output priority 0; policy accept;',
    '    ip daddr 127.0.0.0/8 return',
    ...(withIpv6 ? ['    ip6 daddr ::1 return'] : []),
    '    ip protocol udp add @udp4 { ip daddr . udp dport }',
    ...(withIpv6 ? ['    ip6 nexthdr udp add @udp6 { ip6 daddr . udp dport }'] : []),
    '    meta l4proto udp counter drop',
    '    drop',
    '  }',
    '}',
    '',
  ].join('\n');
}

/**
 * Sets up redirection in the network namespace of process `pid` (the sandbox's blocked init),
 * synchronously: the rules at once, the routes by {@link NamespaceRedirection.route} once the sandbox's
 * `lo` is up (bubblewrap brings it up just after reporting its child, so the rules are written while it
 * does). Throws when a step fails; the caller then never starts the agent's command.
 */
export function redirectInNamespace(pid: number, ports: RedirectionPorts): NamespaceRedirection {
  const problem = redirectionUnavailable();
  // Internal: callers ask redirectionUnavailable() first and redirect only where it found nftables.
  if (problem !== undefined) throw new Error(problem);
  const startedAt = Date.now();
  const nft = inNetworkNamespace(pid, () => {
    const context = openNftables();
    try {
      try {
        context.run(redirectionRuleset(ports, true));
      } catch {
        // A kernel without IPv6: its connections stay unroutable (blocked, unseen).
        context.run(redirectionRuleset(ports, false));
      }
      return context;
    } catch (error) {
      context.close();
      throw error;
    }
  });
  let routed = false;
  return {
    route() {
      if (routed) return true;
      routed = inNetworkNamespace(pid, () => {
        // `src`: without it a connection leaves from 0.0.0.0, and the redirected replies never reach it.
        if (!addLoopbackDefaultRoute(4)) return false;
        try {
          // Best effort: where IPv6 is disabled its connections stay unroutable — blocked, unseen.
          addLoopbackDefaultRoute(6);
        } catch {
          // no IPv6 route: see above
        }
        return true;
      });
      return routed;
    },
    close() {
      try {
        if (ports.onDatagrams !== undefined) {
          const read = readDatagrams(nft, startedAt);
          ports.onDatagrams(read.blocked, read.unattributed);
        }
      } catch {
        // The namespace's sets could not be read: nothing is reported, as if no datagram had been sent.
        // (It cannot happen while the context holds the namespace; a failure here is not the agent's.)
      } finally {
        nft.close();
      }
    },
  };
}

interface SetElement {
  elem?: { val?: { concat?: unknown[] }; expires?: number; counter?: { packets?: number; bytes?: number } };
}

/** The datagram sets' elements as blocked connections, and whether datagrams went uncounted. */
function readDatagrams(
  nft: NftablesContext,
  startedAt: number,
): { blocked: BlockedConnection[]; unattributed: boolean } {
  // One listing of the whole table: both sets and the counting rule.
  const listing = nft.listJson(`list table inet ${TABLE}`);
  const blocked = parseSetListing(listing, { now: Date.now(), startedAt });
  const attributed = blocked.reduce((sum, entry) => sum + (entry.via === 'udp' ? entry.datagrams : 0), 0);
  blocked.sort((a, b) => a.at.localeCompare(b.at));
  return { blocked, unattributed: udpDrops(listing) > attributed };
}

/** The elements of one datagram set (libnftables JSON) as blocked connections, dated to the second. */
export function parseSetListing(
  listing: unknown,
  clock: { now: number; startedAt: number },
): BlockedConnection[] {
  const items = (listing as { nftables?: Array<{ set?: { elem?: SetElement[] } }> }).nftables ?? [];
  const out: BlockedConnection[] = [];
  for (const item of items) {
    for (const element of item.set?.elem ?? []) {
      const [address, port] = element.elem?.val?.concat ?? [];
      const packets = element.elem?.counter?.packets ?? 0;
      if (typeof address !== 'string' || typeof port !== 'number' || packets <= 0) continue;
      const age = ELEMENT_TIMEOUT_S - (element.elem?.expires ?? ELEMENT_TIMEOUT_S);
      const at = Math.max(clock.startedAt, clock.now - age * 1000);
      out.push({
        at: new Date(at).toISOString(),
        via: 'udp',
        host: address,
        port,
        datagrams: packets,
        bytes: element.elem?.counter?.bytes ?? 0,
      });
    }
  }
  return out;
}

/** Packets the `meta l4proto udp counter drop` rule counted (libnftables JSON of the table). */
function udpDrops(listing: unknown): number {
  const items = (listing as { nftables?: Array<{ rule?: { expr?: Array<Record<string, unknown>> } }> })
    .nftables;
  for (const item of items ?? []) {
    const expressions = item.rule?.expr ?? [];
    const counter = expressions.find((expression) => 'counter' in expression)?.counter as
      | { packets?: number }
      | undefined;
    if (counter !== undefined && expressions.some((expression) => 'drop' in expression)) {
      return counter.packets ?? 0;
    }
  }
  return 0;
}
