import { BlockList, isIP } from 'node:net';
import { InvalidOptionError } from '../errors.js';
import { hostMatches } from '../verdicts/request-sent.js';

/**
 * Which destinations the egress proxy forwards to (SPEC §14). Everything is refused unless the campaign's
 * `allow:` names it or it is the model endpoint; and even an allowed *name* is refused when it resolves to
 * an address of the host or its networks (loopback, link-local, private, unique-local, unspecified), so an
 * agent cannot reach Witness's own services, a database on 127.0.0.1 or a cloud metadata endpoint through
 * the proxy — by a literal address, by an address in disguise (`2130706433`, `0x7f.1`, `[::ffff:7f00:1]`,
 * which URL parsing turns into `127.0.0.1` before the check), or by a name pointing there (`localtest.me`,
 * DNS rebinding: the address checked is the one connected to). Only an `allow:` entry that is itself such an
 * address literal, or the model endpoint, reaches one.
 */

export interface Destination {
  /** Lower-case host name, or an IP address in canonical form (no brackets). */
  host: string;
  port: number;
}

export interface AllowRule {
  /** A host name, IP address or glob (`*.example.org`). */
  host: string;
  /** Any port when absent. */
  port?: number | undefined;
}

/** `api.example.com`, `*.example.org:443`, `10.0.0.5:8080`, `[::1]:9000`. */
export function parseAllowRule(rule: string): AllowRule {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(rule);
  if (bracketed !== null) {
    return { host: (bracketed[1] as string).toLowerCase(), ...portOf(bracketed[2], rule) };
  }
  const colon = rule.lastIndexOf(':');
  if (colon > 0 && rule.indexOf(':') === colon) {
    return { host: rule.slice(0, colon).toLowerCase(), ...portOf(rule.slice(colon + 1), rule) };
  }
  return { host: rule.toLowerCase() };
}

function portOf(text: string | undefined, rule: string): { port?: number } {
  if (text === undefined) return {};
  const port = Number(text);
  if (!/^\d{1,5}$/.test(text) || port < 1 || port > 65_535) {
    throw new InvalidOptionError(
      `network.allow: ${JSON.stringify(rule)} has no valid port after ":" (give a port from 1 to 65535, or none for any port)`,
    );
  }
  return { port };
}

const LOCAL = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  LOCAL.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  LOCAL.addSubnet(network, prefix, 'ipv6');
}

/** True for an address of the host or its local networks (IPv4-mapped IPv6 judged as its IPv4). */
export function isLocalAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped !== null) return LOCAL.check(mapped[1] as string, 'ipv4');
  const family = isIP(address);
  if (family === 0) return false;
  return LOCAL.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

export class DestinationPolicy {
  readonly #rules: AllowRule[];
  readonly #always: Destination[];

  /**
   * @param allow the campaign's `network.allow`
   * @param always destinations forwarded whatever they resolve to (the model endpoint)
   */
  constructor(allow: readonly string[], always: readonly Destination[] = []) {
    this.#rules = allow.map(parseAllowRule);
    this.#always = always.map((entry) => ({ host: entry.host.toLowerCase(), port: entry.port }));
  }

  /** Why `destination` is refused before any lookup, or undefined when it may be forwarded. */
  refusal(destination: Destination): string | undefined {
    if (this.isAlways(destination)) return undefined;
    const rule = this.#rules.find(
      (candidate) =>
        (candidate.port === undefined || candidate.port === destination.port) &&
        hostMatches(candidate.host, destination.host),
    );
    if (rule === undefined) return 'not on the allowlist';
    if (isLocalAddress(destination.host) && rule.host !== destination.host) {
      return 'a local address (loopback, link-local or private) is never forwarded';
    }
    return undefined;
  }

  /** Why a resolved `address` of an allowed destination is refused (a name pointing at the host). */
  addressRefusal(destination: Destination, address: string): string | undefined {
    if (this.isAlways(destination)) return undefined;
    if (!isLocalAddress(address)) return undefined;
    if (this.#rules.some((rule) => rule.host === address)) return undefined;
    return `resolves to a local address (${address}), never forwarded`;
  }

  isAlways(destination: Destination): boolean {
    return this.#always.some((entry) => entry.host === destination.host && entry.port === destination.port);
  }
}
