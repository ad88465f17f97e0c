import { createRequire } from 'node:module';
import type { Socket } from 'node:net';

/**
 * Where a redirected connection was going (SPEC §14, transparent redirection): the sandbox's netfilter
 * rules rewrite every TCP connection an agent's program makes to an address outside the sandbox's loopback
 * to Witness's listener there, and the kernel keeps the address it was sent to; getsockopt(2) with
 * SO_ORIGINAL_DST (IP6T_SO_ORIGINAL_DST for IPv6) on the accepted socket gives it back. Node has no binding
 * for it, so it is reached through koffi, loaded on first use.
 */

const SOL_IP = 0;
const SOL_IPV6 = 41;
const SO_ORIGINAL_DST = 80;
const AF_INET = 2;
const AF_INET6 = 10;

export interface OriginalDestination {
  /** The address as connected to (IPv4 dotted, IPv6 in its canonical compressed form). */
  address: string;
  port: number;
}

type Getsockopt = (fd: number, level: number, name: number, value: Buffer, length: number[]) => number;

let getsockopt: Getsockopt | undefined;
let loadError: string | undefined;

function load(): Getsockopt | undefined {
  if (getsockopt !== undefined || loadError !== undefined) return getsockopt;
  try {
    const koffi = createRequire(import.meta.url)('koffi') as {
      load(path: null): { func(signature: string): (...args: unknown[]) => unknown };
    };
    const call = koffi
      .load(null)
      .func('int getsockopt(int fd, int level, int name, _Out_ uint8_t *value, _Inout_ uint32_t *length)');
    getsockopt = (fd, level, name, value, length) => Number(call(fd, level, name, value, length));
  } catch (error) {
    loadError = `getsockopt could not be loaded (${(error as Error).message})`;
  }
  return getsockopt;
}

/** Undefined when original destinations can be read here; otherwise why not. */
export function originalDestinationAvailable(): string | undefined {
  if (process.platform !== 'linux') return 'SO_ORIGINAL_DST is Linux only';
  return load() === undefined ? loadError : undefined;
}

/**
 * The destination a redirected connection was sent to, or undefined when the socket has no descriptor
 * (not a kernel socket) or the kernel knows none (the connection was not redirected).
 */
export function originalDestination(socket: Socket): OriginalDestination | undefined {
  const call = load();
  const fd = (socket as unknown as { _handle?: { fd?: unknown } })._handle?.fd;
  if (call === undefined || typeof fd !== 'number' || fd < 0) return undefined;
  const v6 = socket.remoteFamily === 'IPv6' && !(socket.remoteAddress ?? '').startsWith('::ffff:');
  const value = Buffer.alloc(28);
  const length = [value.length];
  if (call(fd, v6 ? SOL_IPV6 : SOL_IP, SO_ORIGINAL_DST, value, length) !== 0) return undefined;
  return parseSockaddr(value.subarray(0, length[0]));
}

/** A `sockaddr_in` or `sockaddr_in6` as the kernel writes it (family in host order, port big-endian). */
export function parseSockaddr(bytes: Buffer): OriginalDestination | undefined {
  if (bytes.length < 8) return undefined;
  const family = bytes.readUInt16LE(0);
  const port = bytes.readUInt16BE(2);
  if (family === AF_INET) {
    return { address: [...bytes.subarray(4, 8)].join('.'), port };
  }
  if (family === AF_INET6 && bytes.length >= 24) {
    const groups: string[] = [];
    for (let i = 0; i < 8; i++) groups.push(bytes.readUInt16BE(8 + i * 2).toString(16));
    // The URL parser writes an IPv6 address in its canonical compressed form.
    return { address: new URL(`http://[${groups.join(':')}]/`).hostname.replace(/^\[|\]$/g, ''), port };
  }
  return undefined;
}
